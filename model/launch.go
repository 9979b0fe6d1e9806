package model

import (
	"fmt"
	"time"
)

// Launch says that llmtop started (or restarted) the engine at Endpoint
// itself (`llmtop run`): its process, its exact command line, and, when
// the restart applied a finding's change, that change. The run that starts
// after Time is marked with Applied.
type Launch struct {
	Endpoint string    `json:"endpoint"`
	Time     time.Time `json:"time"`
	PID      int       `json:"pid"`
	Cmdline  string    `json:"cmdline"`
	Log      string    `json:"log,omitempty"`
	// Applied is "applied: <finding> → <change>" or "undo: <change>"; ""
	// for the first start.
	Applied string `json:"applied,omitempty"`
	// Restarting: llmtop is about to stop the engine (PID, Cmdline: the
	// process now) to start it again with Applied. Until the Launch of
	// the new process (or one with Failed) the engine not answering is
	// that restart, not an outage.
	Restarting bool `json:"restarting,omitempty"`
	// Failed: the restart stopped the engine but started no new process,
	// and why.
	Failed string `json:"failed,omitempty"`
}

// RestartDetail is how a restart llmtop performs reads while it lasts:
// "restarting (applied: ttft_queueing → --max-num-seqs 16 → 32)".
func (l Launch) RestartDetail() string {
	if l.Applied == "" {
		return "restarting (llmtop restarts it)"
	}
	return "restarting (" + l.Applied + ")"
}

// BenchLoad is a benchmark's offered load: what a second run must send to
// be compared with the first at the same load.
type BenchLoad struct {
	Preset    string  `json:"preset,omitempty"`
	Streams   int     `json:"streams,omitempty"` // closed loop: concurrent streams
	Rate      float64 `json:"rate,omitempty"`    // open loop: requests/s
	DurationS float64 `json:"duration_s"`
	InputLen  int     `json:"input_len"`
	OutputLen int     `json:"output_len"`
	Seed      uint64  `json:"seed,omitempty"`
}

// String writes the load as a person reads it: "16 streams × 30 s, 256 in / 128 out".
func (l BenchLoad) String() string {
	shape := fmt.Sprintf("%d streams", l.Streams)
	if l.Rate > 0 {
		shape = fmt.Sprintf("%g req/s", l.Rate)
	}
	return fmt.Sprintf("%s × %gs, %d in / %d out", shape, l.DurationS, l.InputLen, l.OutputLen)
}
