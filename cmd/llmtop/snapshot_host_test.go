package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Issue 27: snapshot reads the host around a local endpoint as the
// monitor does (twice, so CPU is a rate over the interval): here the
// endpoint's port is held by this test process, so its own PID is the
// API server.
func TestSnapshotReadsTheHost(t *testing.T) {
	engineFlags.engine, engineFlags.apiKey, engineFlags.metricsPath, engineFlags.timeout = "", "", "", 2*time.Second
	url := serveFake(t, model.VLLM)
	var out bytes.Buffer
	if err := runSnapshot(context.Background(), &out, []string{url}, true, 300*time.Millisecond); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, out.String())
	}
	var doc model.SnapshotJSON
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Endpoints) == 0 {
		t.Fatalf("%v\n%s", err, out.String())
	}
	h := doc.Endpoints[0].Host
	if h == nil {
		t.Fatalf("no host reading:\n%s", out.String())
	}
	f := h.FrontProc()
	if f == nil || f.PID != os.Getpid() || !f.RSS.OK || f.Threads < 1 {
		t.Fatalf("the API server is not this process (%d): %+v", os.Getpid(), h.Procs)
	}
	if !f.CPU.OK || !h.MemAvailable.OK || h.IntervalS <= 0 {
		t.Errorf("no rates over the interval: cpu %+v mem %+v interval %v", f.CPU, h.MemAvailable, h.IntervalS)
	}
	out.Reset()
	if err := runSnapshot(context.Background(), &out, []string{url}, false, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  host CPU ") || !strings.Contains(out.String(), "busiest thread") {
		t.Errorf("the text has no host lines:\n%s", out.String())
	}
}
