package model

import (
	"sort"
	"strings"
	"time"
)

// An endpoint's history is a sequence of runs: one engine process from its
// start to its end. A run starts when the engine restarts (its counters go
// back, process_start_time_seconds changes, its version or model changes,
// or its log prints a start banner) and ends with how it ended. Rates,
// percentiles and evidence never span two runs.

// RunEnd is how a run ended.
type RunEnd string

const (
	RunRunning RunEnd = "running" // the current run
	RunPlanned RunEnd = "planned" // a clean shutdown, SIGTERM or a config change
	RunCrash   RunEnd = "crash"   // a traceback, CUDA error, engine death, kill
	// RunUnknown: the run ended and nothing said how (counters reset with
	// no log attached). Not a crash: a crash loop counts crashes only.
	RunUnknown RunEnd = "unknown"
)

// Lifecycle is where an endpoint's engine is in its life.
type Lifecycle string

const (
	LifeUnknown     Lifecycle = "unknown"     // nothing seen yet
	LifeStarting    Lifecycle = "starting"    // loading: the log or the health route says so
	LifeServing     Lifecycle = "serving"     // answers with metrics
	LifeStopping    Lifecycle = "stopping"    // clean shutdown under way (log)
	LifeStopped     Lifecycle = "stopped"     // shut down cleanly; nothing answers
	LifeCrashed     Lifecycle = "crashed"     // died: traceback, CUDA error, engine dead
	LifeUnreachable Lifecycle = "unreachable" // nothing answers, and nothing says why
	// LifeGone: the endpoint left the source that listed it (a replica
	// scaled down, a target dropped from Prometheus): not an outage.
	LifeGone Lifecycle = "gone"
)

// Run is one engine process's life at an endpoint, as seen by llmtop.
type Run struct {
	N       int        `json:"n"`
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended"`
	End     RunEnd     `json:"end"`
	// StartedBy says how the start was seen: "first seen", "counters
	// reset", "process start time changed", "log start banner", "version
	// changed", "model changed".
	StartedBy string `json:"started_by"`
	// EndReason says how the end was seen, EndLine is the log line that
	// said it (a crash's error line).
	EndReason string `json:"end_reason,omitempty"`
	EndLine   string `json:"end_line,omitempty"`
	// EndGuessed: nothing said how the run ended; End is inferred (it
	// stopped answering and its log, which says so on a clean shutdown,
	// stayed silent). A shutdown line read later replaces the guess.
	EndGuessed bool `json:"end_guessed,omitempty"`

	Engine  Engine   `json:"engine,omitempty"`
	Version string   `json:"version,omitempty"`
	Models  []string `json:"models,omitempty"`
	// Config is the served configuration: the log's args line
	// (args.KEY), /v1/models' max_model_len, the engine's config info
	// (info.KEY), the process command line (cmdline) when local.
	Config map[string]string `json:"config,omitempty"`
	// Summary is what the run did under load.
	Summary RunSummary `json:"summary"`
	// Benches are the benchmarks measured during this run.
	Benches []RunBench `json:"benches,omitempty"`
	// Applied is set on a run llmtop started itself to apply a finding's
	// change ("applied: queue_backlog → --max-num-seqs 16 → 32") or to undo
	// one ("undo: …").
	Applied string `json:"applied,omitempty"`
	// Behaviour is the newest behaviour probe of this run (without its
	// raw exchanges): its fingerprints tell a later run's template,
	// tokenizer or generation defaults apart.
	Behaviour *Behaviour `json:"behaviour,omitempty"`
}

// RunSummary is a run's behaviour: rates averaged over the time it served,
// latency percentiles over its last MaxWindow at most, peaks of gauges.
// Percentiles are bucket estimates where the engine gives buckets.
type RunSummary struct {
	ServedS    float64 `json:"served_s"` // seconds with metrics in this run
	Samples    int     `json:"samples"`
	RequestsPS Opt     `json:"requests_per_s"`
	// OfferedPS is the load offered: requests finished per second plus the
	// growth of those running and waiting over the same window (what
	// arrived, whether or not the engine kept up). Runs are compared at
	// the load offered, not at what a slower configuration could finish.
	OfferedPS   Opt `json:"offered_requests_per_s"`
	GenTPS      Opt `json:"generation_tokens_per_s"`
	PromptTPS   Opt `json:"prompt_tokens_per_s"`
	TTFTp50ms   Opt `json:"ttft_p50_ms"`
	TTFTp99ms   Opt `json:"ttft_p99_ms"`
	TPOTp50ms   Opt `json:"tpot_p50_ms"`
	TPOTp99ms   Opt `json:"tpot_p99_ms"`
	ITLp50ms    Opt `json:"itl_p50_ms"`
	ITLp99ms    Opt `json:"itl_p99_ms"`
	KVPeak      Opt `json:"kv_cache_usage_peak"`
	Preemptions Opt `json:"preemptions"`
	WaitingPeak Opt `json:"waiting_peak"`
	RunningPeak Opt `json:"running_peak"`
	// SpecAccept is the speculative-decoding acceptance (absent: the run
	// did not speculate, or its engine does not say).
	SpecAccept Opt `json:"spec_decode_acceptance"`
	// WindowS is the span the percentiles cover.
	WindowS float64 `json:"window_s"`
}

// RunBench is a benchmark attached to the run it measured.
type RunBench struct {
	Time      time.Time `json:"time"`
	Completed int       `json:"completed"`
	Failed    int       `json:"failed"`
	TTFTp99ms Opt       `json:"ttft_p99_ms"`
	TPOTp99ms Opt       `json:"tpot_p99_ms"`
	OutputTPS Opt       `json:"output_tokens_per_s"`
	// Load is the load the benchmark offered (nil: not known, an older
	// recording): two runs are compared at the same load only when their
	// loads are equal.
	Load *BenchLoad `json:"load,omitempty"`
}

// Elapsed is how long the run lasted, or has lasted until now.
func (r Run) Elapsed(now time.Time) time.Duration {
	if r.Ended != nil {
		return r.Ended.Sub(r.Started)
	}
	return now.Sub(r.Started)
}

// ConfigDiff lists the configuration keys that differ between two runs,
// "key old → new", sorted. Keys are grouped by their source (the part
// before the first dot: args, info…): a source only one run has is not
// compared (unknown → known is not a change); within a source both have,
// a key one side lacks is a flag set or dropped ("(default)").
func ConfigDiff(a, b map[string]string) []string {
	has := func(m map[string]string, src string) bool {
		for k := range m {
			if configSource(k) == src {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			src := configSource(k)
			if a[k] != b[k] && has(a, src) && has(b, src) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		if x, y, ok := argsDiff(a[k], b[k]); ok && (k == "cmdline" || strings.HasSuffix(k, ".cmdline")) {
			out[i] = k + " " + x + " → " + y
			continue
		}
		out[i] = k + " " + orDefault(a, k) + " → " + orDefault(b, k)
	}
	return out
}

// argsDiff is what differs between two command lines, word by word: the
// words they share at both ends left out, the flag before a changed value
// kept ("-np 2 → -np 4", not both whole command lines with their paths).
// A side with nothing of its own is "(none)". Not ok when either is empty.
func argsDiff(a, b string) (x, y string, ok bool) {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa) == 0 || len(wb) == 0 {
		return "", "", false
	}
	pre := 0
	for pre < len(wa) && pre < len(wb) && wa[pre] == wb[pre] {
		pre++
	}
	suf := 0
	for suf < len(wa)-pre && suf < len(wb)-pre && wa[len(wa)-1-suf] == wb[len(wb)-1-suf] {
		suf++
	}
	if pre > 0 && !strings.HasPrefix(firstOf(wa[pre:len(wa)-suf], wb[pre:len(wb)-suf]), "-") {
		pre-- // the changed word is a value: keep its flag
	}
	side := func(w []string) string {
		if len(w) == 0 {
			return "(none)"
		}
		return strings.Join(w, " ")
	}
	return side(wa[pre : len(wa)-suf]), side(wb[pre : len(wb)-suf]), true
}

// firstOf is the first word of a, else of b.
func firstOf(a, b []string) string {
	if len(a) > 0 {
		return a[0]
	}
	if len(b) > 0 {
		return b[0]
	}
	return ""
}

func configSource(k string) string {
	for i := 0; i < len(k); i++ {
		if k[i] == '.' {
			return k[:i]
		}
	}
	return k
}

func orDefault(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return "(default)"
}
