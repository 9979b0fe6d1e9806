// Package diagnosis turns model state, events, GPU readings and benchmark
// results into findings: what is wrong, the numbers that show it, and the
// exact flag changes for the engine in front of it. Pure functions: no I/O.
package diagnosis

import (
	"encoding/json"
	"math"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Category is the runbooks' symptom split.
type Category string

const (
	Availability Category = "availability"
	Queueing     Category = "queueing"
	Prefill      Category = "prefill"
	Decode       Category = "decode"
	Memory       Category = "memory"
	GPU          Category = "gpu"
	Behaviour    Category = "behaviour"
	API          Category = "api"
	Routing      Category = "routing"
	Regression   Category = "regression"
)

// Evidence is one number that supports a finding, with where it came from
// and the window it covers.
type Evidence struct {
	Text   string        `json:"text"`   // e.g. "TTFT p90≈2.4 s"
	Source string        `json:"source"` // the metric's name, "log", "nvml"…
	Window time.Duration `json:"-"`      // written as window_s
}

type evidenceJSON struct {
	Text    string  `json:"text"`
	Source  string  `json:"source"`
	WindowS float64 `json:"window_s,omitempty"`
}

// MarshalJSON writes the window in seconds, like every other duration in
// llmtop's JSON.
func (e Evidence) MarshalJSON() ([]byte, error) {
	return json.Marshal(evidenceJSON{e.Text, e.Source, math.Round(e.Window.Seconds()*1000) / 1000})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Evidence) UnmarshalJSON(b []byte) error {
	var j evidenceJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Evidence{Text: j.Text, Source: j.Source, Window: time.Duration(j.WindowS * float64(time.Second))}
	return nil
}

// Action is one concrete change to try.
type Action struct {
	Change   string `json:"change"`    // e.g. "--max-num-seqs 48"
	Why      string `json:"why"`       // e.g. "TPOT crossed the 50 ms SLO above 52 running"
	TradeOff string `json:"trade_off"` // e.g. "lower peak throughput"
}

// Finding is one diagnosed problem.
type Finding struct {
	ID       string `json:"id"` // stable rule id, e.g. "ttft_queueing"
	Endpoint string `json:"endpoint,omitempty"`
	// Others are the other endpoints the finding is about, besides
	// Endpoint (a pool's idle workers after the first): a face that shows
	// each endpoint's findings (the fleet view) shows it on theirs too.
	Others []string `json:"others,omitempty"`
	// Pool, when set, is the pool the finding is about, and with its ID
	// its identity (Subject): which of a pool's workers are idle changes
	// while the pool stays starved, and Endpoint, the first idle one,
	// with it.
	Pool     string         `json:"pool,omitempty"`
	Category Category       `json:"category"`
	Severity model.Severity `json:"severity"`
	Title    string         `json:"title"`
	Evidence []Evidence     `json:"evidence"`
	Cause    string         `json:"cause"`
	Actions  []Action       `json:"actions"`
	Opened   time.Time      `json:"opened"`
	// ClearSince is set while the finding is still open but its condition
	// no longer holds (it closes after Config.Clear): when it last held.
	ClearSince time.Time `json:"clear_since,omitzero"`
	Closed     time.Time `json:"closed,omitzero"`
	// Breach is how many times its threshold the measured value is (0 when
	// the rule does not say): at Config.BreachCrit or more the finding
	// opens after a short hold, not the rule's long one.
	Breach float64 `json:"breach,omitempty"`
	// Acked says a person acknowledged the finding for this engine run
	// (the screen's a key); SilencedUntil, that its rule is silenced until
	// then. The core sets both; such findings stay listed, ranked last.
	Acked         bool      `json:"acked,omitempty"`
	SilencedUntil time.Time `json:"silenced_until,omitzero"`
}

// Subject is what the finding is about, its identity with its ID: the
// pool where it names one ("pool " + Pool), else its endpoint. A
// finding's hold, its open and close events and an acknowledgement follow
// its subject, so pool_starved's stays one finding while its idle workers
// change.
func (f Finding) Subject() string {
	if f.Pool != "" {
		return "pool " + f.Pool
	}
	return f.Endpoint
}

// Active reports whether the finding is still open.
func (f Finding) Active() bool { return f.Closed.IsZero() }
