package report

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Result is one run: what was run (Info) and what came of it (Metrics),
// flattened into one JSON object whose names follow `vllm bench serve
// --save-result`. The API key is never part of it.
type Result struct {
	Info
	Metrics
	// Server is the server's own view (its TTFT/ITL/queue histograms and
	// gauges) over the run's window [StartTime, EndTime], filled by whoever
	// watches the endpoint's metrics; nil when nobody did.
	Server *model.MetricsJSON `json:"server,omitempty"`
	// ServerEngine names the engine behind Server ("llama.cpp"), so that a
	// latency it does not report is said to be its, not shown as a bare
	// "--"; empty when unknown.
	ServerEngine string `json:"server_engine,omitempty"`
}

// Info describes a run.
type Info struct {
	Date           string    `json:"date"`    // start, local time, YYYYMMDD-HHMMSS as vllm names it
	Backend        string    `json:"backend"` // openai-chat, openai, ollama-chat, ollama-generate
	BaseURL        string    `json:"base_url"`
	Endpoint       string    `json:"endpoint"`
	ModelID        string    `json:"model_id"`
	NumPrompts     int       `json:"num_prompts"` // requests sent (warmup excluded)
	RequestRate    Rate      `json:"request_rate"`
	Burstiness     float64   `json:"burstiness"`
	MaxConcurrency int       `json:"max_concurrency"`
	InputLen       int       `json:"input_len"`  // target prompt length (words ≈ tokens)
	OutputLen      int       `json:"output_len"` // max_tokens asked for
	PrefixLen      int       `json:"prefix_len,omitempty"`
	Warmup         int       `json:"num_warmups"`
	IgnoreEOS      bool      `json:"ignore_eos"`
	SLOTTFTms      model.Opt `json:"slo_ttft_ms"`
	SLOTPOTms      model.Opt `json:"slo_tpot_ms"`
	StartTime      time.Time `json:"start_time"`
	EndTime        time.Time `json:"end_time"`
	Notes          []string  `json:"notes,omitempty"`
	// Simulated is set when the server said it is llmtop's simulated
	// engine (llmtop sim / demo): its latencies come from a model, not a GPU.
	Simulated bool `json:"simulated,omitempty"`
}

// Rate is a request rate in req/s; +Inf (all at once, the closed loop's
// "as fast as the streams allow") is written "inf" as vllm writes it.
type Rate float64

// SimulatedNote is the note a result measured against the simulator carries.
const SimulatedNote = "SIMULATED: the server is llmtop's simulated vLLM; its latencies come from a step-time model, not a GPU"

// MarkSimulated flags r as measured against the simulator, once.
func (r *Result) MarkSimulated() {
	if r.Simulated {
		return
	}
	r.Simulated = true
	r.Notes = append(r.Notes, SimulatedNote)
}

// Inf is the unbounded rate.
var Inf = Rate(math.Inf(1))

// IsInf reports whether the rate is unbounded.
func (r Rate) IsInf() bool { return math.IsInf(float64(r), 1) || r <= 0 }

func (r Rate) String() string {
	if r.IsInf() {
		return "inf"
	}
	return strconv.FormatFloat(float64(r), 'g', -1, 64)
}

// MarshalJSON writes "inf" or the number.
func (r Rate) MarshalJSON() ([]byte, error) {
	if r.IsInf() {
		return []byte(`"inf"`), nil
	}
	return strconv.AppendFloat(nil, float64(r), 'g', -1, 64), nil
}

// UnmarshalJSON reads "inf" or a number.
func (r *Rate) UnmarshalJSON(b []byte) error {
	if string(b) == `"inf"` {
		*r = Inf
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Rate(v)
	return nil
}

// ParseRate reads "inf" or a positive number of requests per second.
func ParseRate(s string) (Rate, error) {
	if s == "inf" || s == "" {
		return Inf, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || math.IsNaN(v) {
		return 0, &strconv.NumError{Func: "ParseRate", Num: s, Err: strconv.ErrSyntax}
	}
	return Rate(v), nil
}
