package main

import (
	"context"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
)

// --no-gpu is said on the GPU pane at once, not after a wait as "the GPU
// source sent nothing".
func TestNoGPUSaysSoAtOnce(t *testing.T) {
	defer func(v bool) { gpuFlags.noGPU = v }(gpuFlags.noGPU)
	gpuFlags.noGPU = true
	got := make(chan any, 1)
	env := &session.Env{Interval: time.Second, Send: func(m any) { got <- m }}
	if err := startGPU(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		snap, ok := m.(model.GPUSnapshot)
		if !ok || snap.Err != "GPU reading off (--no-gpu)" || snap.Time.IsZero() || len(snap.GPUs) != 0 {
			t.Fatalf("sent %#v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing sent with --no-gpu")
	}
	if len(env.OnInterval) != 0 {
		t.Fatal("--no-gpu registered an interval callback")
	}
}
