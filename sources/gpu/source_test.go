package gpu

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// stubRefresher answers each refresh with the next of its snapshots.
type stubRefresher struct {
	snaps []model.GPUSnapshot
	i     int
}

func (s *stubRefresher) refresh(time.Time) (model.GPUSnapshot, []model.Event) {
	snap := s.snaps[min(s.i, len(s.snaps)-1)]
	s.i++
	return snap, nil
}

func (*stubRefresher) close() {}

// Each refresh's snapshot is cleaned, whatever the last one held: a secret
// on a process's command line is redacted every time, and a command line
// or an error that changed reads as it is now on the next refresh.
func TestEveryRefreshIsCleaned(t *testing.T) {
	snap := func(cmdline, err string) model.GPUSnapshot {
		return model.GPUSnapshot{GPUs: []model.GPU{{Name: "NVIDIA H100 80GB HBM3", Err: err,
			Processes: []model.GPUProcess{{PID: 7, Name: "python3", Cmdline: cmdline}}}}}
	}
	first := "python3 -m vllm.entrypoints.openai.api_server --api-key sk-first111 --port 8000"
	second := "python3 -m sglang.launch_server --api-key sk-second22 --port 30000"
	stub := &stubRefresher{snaps: []model.GPUSnapshot{
		snap(first, ""), snap(first, ""), snap(second, ""), snap(second, "could not read ECC (https://u:hunter2@example.com)"), snap(first, ""),
	}}
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	s := newSource(Config{Now: func() time.Time { return at }}, stub)
	for i, want := range []struct{ cmdline, err string }{
		{"vllm", ""}, {"vllm", ""}, {"sglang", ""}, {"sglang", "could not read ECC"}, {"vllm", ""},
	} {
		got, _ := s.Refresh()
		g := got.GPUs[0]
		c := g.Processes[0].Cmdline
		if !strings.Contains(c, want.cmdline) || !strings.Contains(c, "--api-key "+model.Redacted) || strings.Contains(c, "sk-") {
			t.Errorf("refresh %d: cmdline %q, want %s's with its key redacted", i, c, want.cmdline)
		}
		if !strings.HasPrefix(g.Err, want.err) || strings.Contains(g.Err, "hunter2") || (want.err == "") != (g.Err == "") {
			t.Errorf("refresh %d: err %q, want %q redacted", i, g.Err, want.err)
		}
	}
}
