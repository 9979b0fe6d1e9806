package diagnosis

import (
	"fmt"
	"math"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func init() {
	register(rule{id: "log_mismatch", checks: "the log's stats lines agree with /metrics (the log is this engine's)",
		needs: needMetrics | needLogs, hold: holdDefault, eval: ruleLogMismatch})
}

// logFresh is how old a log stats line may be to be compared with a scrape:
// vLLM prints one every 10 s while it serves, so a live log stays fresh, and
// the last line of a log that went quiet (load ended) is not held against a
// scrape that moved on for longer than the rule's hold.
const logFresh = 15 * time.Second

// A log and a scrape of the same engine at the same moment differ by the
// batch's churn and by their averaging windows (a 10 s log interval vs the
// scrape window); these margins stay clear of that.
const (
	mismatchShare   = 0.5 // of the larger value
	mismatchRunning = 8   // requests
	mismatchGenTPS  = 20  // tokens/s
)

func disagree(a, b model.Opt, abs float64) bool {
	if !a.OK || !b.OK {
		return false
	}
	d := math.Abs(a.V - b.V)
	return d > abs && d > mismatchShare*math.Max(a.V, b.V)
}

// ruleLogMismatch cross-checks the log's stats lines against the scrape of
// the endpoint they are attached to. Both read the same scheduler, so when
// running requests and generation throughput both disagree far beyond what
// timing explains (or the log names another engine), the log is most likely
// another process's: a different container, replica or port. Engines whose
// log gives no running count (llama.cpp) are only checked by engine name.
func ruleLogMismatch(e *env) []Finding {
	logEngine := engineFromEvents(e.in.Events)
	var out []Finding
	for ep := range each(e.withMetrics()) {
		lg, st := ep.Log, ep.State
		var ev []Evidence
		at := " (log stats line " + lg.Time.Format("15:04:05") + ")"
		fresh := lg.Samples > 0 && absDur(st.Time.Sub(lg.Time)) <= logFresh
		if st.Source != model.FromScrape {
			// The picture is the log's own (Ollama's metrics carry no
			// numbers): there is nothing to hold its stats against, and
			// "Checked: the log's stats lines agree with /metrics" said
			// otherwise.
			fresh = false
			e.lack(ep, "whether the log's stats lines agree with the metrics (running and throughput not exposed: the picture is the log's own)")
		}
		// Both numbers must be read on both sides and both must disagree:
		// one number alone differs too easily (llama.cpp's per-request
		// timing lines give a token rate over other moments than its
		// counters, and no running count at all).
		if fresh && disagree(st.Running, lg.Running, mismatchRunning) && disagree(st.GenTPS, lg.GenTPS, mismatchGenTPS) {
			ev = append(ev,
				Evidence{Text: fmt.Sprintf("running %s on /metrics vs %s in the log%s", num(st.Running.V), num(lg.Running.V), at), Source: "scrape vs log"},
				Evidence{Text: fmt.Sprintf("generation %s tok/s on /metrics vs %s in the log%s", num(st.GenTPS.V), num(lg.GenTPS.V), at), Source: "scrape vs log", Window: st.RateWindow})
		}
		le, ok := logEngine[ep.URL]
		if !ok && len(e.all) == 1 {
			le, ok = logEngine[""] // a log attached without an endpoint is the only endpoint's
		}
		if ok && ep.Engine() != model.Unknown && !sameEngineFamily(le, ep.Engine()) {
			ev = append(ev, Evidence{Text: fmt.Sprintf("the log is %s's, the endpoint is %s", engineName(le), engineName(ep.Engine())), Source: "log events vs identity"})
		}
		if len(ev) == 0 {
			continue
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Behaviour, Severity: model.SevWarn,
			Title:    "the attached log does not match this endpoint",
			Evidence: ev,
			Cause:    "the log's stats lines describe a different engine process (another container, replica or port), so its events and stand-in numbers are not this endpoint's",
			Actions: []Action{{Change: "attach the log of the process serving " + ep.URL + " (--docker NAME, --journal UNIT, --kube TARGET or --log FILE)",
				Why: "log events and the log's stats lines are judged as this endpoint's", TradeOff: "none"}}})
	}
	return out
}

// sameEngineFamily: a log may name the engine under the one serving
// (engines.Spec.Runs: Triton runs TensorRT-LLM, and Ollama's runner is
// llama.cpp and logs as it).
func sameEngineFamily(log, served model.Engine) bool {
	if log == served {
		return true
	}
	s := engines.Of(served)
	return s != nil && s.Runs != model.Unknown && s.Runs == log
}
