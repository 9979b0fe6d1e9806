package model

import (
	"fmt"
	"time"
)

// Severity orders events and findings.
type Severity int

const (
	SevInfo Severity = iota
	SevWarn
	SevCrit
)

func (s Severity) String() string {
	switch s {
	case SevWarn:
		return "warn"
	case SevCrit:
		return "crit"
	default:
		return "info"
	}
}

// Tag is the severity's upper-case label on screens and in titles:
// CRIT, WARN, INFO.
func (s Severity) Tag() string {
	switch s {
	case SevCrit:
		return "CRIT"
	case SevWarn:
		return "WARN"
	}
	return "INFO"
}

// MarshalText writes the severity as a word in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the word back, so saved snapshots and findings load.
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "info":
		*s = SevInfo
	case "warn":
		*s = SevWarn
	case "crit":
		*s = SevCrit
	default:
		return fmt.Errorf("unknown severity %q (want info, warn or crit)", b)
	}
	return nil
}

// Event is something that happened: a restart seen in the counters, a known
// error line in the log, a GPU that fell off the bus. Events feed the events
// pane and the diagnosis.
type Event struct {
	Time     time.Time         `json:"time"`
	Endpoint string            `json:"endpoint,omitempty"`
	Source   string            `json:"source"`   // "scrape", "log", "gpu", "bench"
	Kind     string            `json:"kind"`     // catalogue id, e.g. "restart", "cuda_oom"
	Severity Severity          `json:"severity"` // info, warn, crit
	Category string            `json:"category"` // memory, availability, config, auth, distributed, stats
	Title    string            `json:"title"`
	Line     string            `json:"line,omitempty"` // the raw log line, when from a log
	Fields   map[string]string `json:"fields,omitempty"`
	// Backlog: the line was already in the log when llmtop began to follow
	// it, so it happened before then. It is shown and judged as a past
	// event, never as one that happens now (it starts or ends no run).
	// Time is the line's own timestamp, or, when the line has none
	// (Untimed), when llmtop read it: it happened at some time before.
	Backlog bool `json:"backlog,omitempty"`
	Untimed bool `json:"untimed,omitempty"`
	// ZoneUnknown: Time is a backlog line's own stamp, which names no
	// zone (vLLM's "INFO 11-27 01:23:45"), and the engine's zone is not
	// known (not a process on this machine): Time reads the engine's
	// clock as if it were llmtop's zone, so it is the engine's wall clock,
	// not a precise instant.
	ZoneUnknown bool `json:"zone_unknown,omitempty"`
}

// BeforeStart is how a backlog event without a timestamp of its own is
// dated: its time is not known, only that it came first.
const BeforeStart = "before llmtop started"

// ZoneUnknownNote follows the time of an event whose zone is not known.
const ZoneUnknownNote = "engine-local time, zone unknown"

// When is the event's time as a clock reads it (15:04:05 in loc), or
// BeforeStart for a backlog line without a timestamp of its own, or the
// engine's own wall clock with ZoneUnknownNote when its zone is not known.
func (e Event) When(loc *time.Location) string {
	if e.Backlog && e.Untimed {
		return BeforeStart
	}
	if e.ZoneUnknown {
		// the digits the engine wrote: Time is in the zone it was read in
		return e.Time.Format("15:04:05") + " " + ZoneUnknownNote
	}
	return e.Time.In(loc).Format("15:04:05")
}

// Event kinds raised by the model itself.
const (
	KindRestart        = "restart"
	KindBucketsChanged = "buckets_changed"
)

// CategoryLifecycle marks events that tell where an engine is in its life
// (start banner, weights loaded, ready, shutting down, crashed); their
// Fields["phase"] is one of the Phase values.
const CategoryLifecycle = "lifecycle"

// Phases a lifecycle event can carry (Event.Fields["phase"]).
const (
	PhaseStart    = "start"    // the start banner: a new process
	PhaseConfig   = "config"   // the served configuration (args line)
	PhaseLoading  = "loading"  // loading weights
	PhaseLoaded   = "loaded"   // weights loaded (fields: seconds)
	PhaseKV       = "kv"       // KV cache profiled / allocated
	PhaseGraphs   = "graphs"   // CUDA graphs captured
	PhaseReady    = "ready"    // serving: application start-up complete
	PhaseStopping = "stopping" // clean shutdown under way
	PhaseStopped  = "stopped"  // shut down cleanly
	PhaseCrash    = "crash"    // the engine died
)
