package diagnosis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// Fleet-wide rules beside routing_skew (rules_fleet.go): a replica far from
// its peers' median, and the share of each model's replicas in each
// symptom. Both judge replicas of one model only: different models are
// different workloads.

// outlierMin is how many replicas with the number it takes to call one an
// outlier: with two, the median is their mean and either could be "far".
const outlierMin = 3

// outlierMetric is one number a replica is compared on.
type outlierMetric struct {
	name    string
	concept string                                  // for metricSource
	abs     float64                                 // the gap must be this large too (seconds, ratio or requests)
	get     func(*Endpoint) (model.Opt, model.Dist) // by reference: an Endpoint is 2 KiB
	format  func(float64) string
}

var outlierMetrics = []outlierMetric{
	{"TTFT p99", "ttft", 0.1, func(ep *Endpoint) (model.Opt, model.Dist) {
		d := ep.State.Latency[model.TTFT]
		return d.P99, d
	}, secs},
	{"TPOT p99", "tpot", 0.010, func(ep *Endpoint) (model.Opt, model.Dist) {
		d := ep.State.Latency[model.TPOT]
		return d.P99, d
	}, secs},
	{"KV usage", "kv", 0.25, func(ep *Endpoint) (model.Opt, model.Dist) { return ep.State.KVUsage, model.Dist{} }, pct},
	{"waiting", "waiting", 10, func(ep *Endpoint) (model.Opt, model.Dist) { return ep.State.Waiting, model.Dist{} }, num},
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ruleOutlier: a replica whose number is SkewRatio× its model's median and
// far from it in absolute terms too; one finding per replica, on its worst
// number, with the peers' median and range as evidence.
func ruleOutlier(e *env) []Finding {
	groups := e.replicas()
	var out []Finding
	for _, m := range sortedModels(groups) {
		eps := groups[m]
		worst := map[string]Finding{}
		ratio := map[string]float64{}
		for _, om := range outlierMetrics {
			var vals []float64
			for i := range eps {
				if v, _ := om.get(eps[i]); v.OK {
					vals = append(vals, v.V)
				}
			}
			if len(vals) < outlierMin {
				if len(vals) > 0 {
					e.lack(eps[0], fmt.Sprintf("%s of %s: %d replica(s) with a number, an outlier needs %d to have a median", om.name, m, len(vals), outlierMin))
				}
				continue
			}
			med := median(vals)
			lo, hi := vals[0], vals[0]
			for _, v := range vals {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			for i := range eps {
				v, d := om.get(eps[i])
				if !v.OK || v.V-med < om.abs || v.V < e.cfg.SkewRatio*math.Max(med, 1e-9) {
					continue
				}
				ep := eps[i]
				r := v.V / math.Max(med, 1e-9)
				if r <= ratio[ep.URL] {
					continue
				}
				ratio[ep.URL] = r
				worst[ep.URL] = Finding{Endpoint: ep.URL, Category: Routing, Severity: model.SevWarn,
					Title: fmt.Sprintf("replica far from its peers: %s %s vs median %s of %d replicas of %s", om.name, om.format(v.V), om.format(med), len(vals), m),
					Evidence: []Evidence{
						{Text: fmt.Sprintf("%s %s on this replica; median %s, range %s–%s over %d replicas of %s", om.name, om.format(v.V), om.format(med), om.format(lo), om.format(hi), len(vals), m),
							Source: metricSource(*ep, om.concept) + " per replica" + sepWord(d.Approx), Window: d.Window},
					},
					Cause: "this replica is not like the others serving the same model: more traffic routed to it, a slower or throttled GPU, another process on its GPU, or different flags",
					Actions: []Action{diffReplicas,
						{Change: "compare this replica's GPU and flags with a typical one, and take it out of rotation until it matches",
							Why: "one slow or overloaded replica sets the fleet's tail latency", TradeOff: "less capacity while it is out"}},
				}
			}
		}
		urls := make([]string, 0, len(worst))
		for u := range worst {
			urls = append(urls, u)
		}
		sort.Strings(urls)
		for _, u := range urls {
			out = append(out, worst[u])
		}
	}
	return out
}

func sepWord(w string) string {
	if w == "" {
		return ""
	}
	return ", " + w
}

func sortedModels(groups map[string][]*Endpoint) []string {
	ms := make([]string, 0, len(groups))
	for m := range groups {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	return ms
}

// symptom is a condition counted across a model's replicas.
type symptom struct {
	word func(Config) string
	// has reports whether the replica shows it; known=false when the
	// replica lacks the number (it is then not counted either way).
	has func(c Config, ep *Endpoint) (has, known bool)
}

var symptoms = []symptom{
	{func(c Config) string { return "KV-bound (KV ≥ " + pct(c.KVHigh) + ")" }, func(c Config, ep *Endpoint) (bool, bool) {
		return ep.State.KVUsage.OK && ep.State.KVUsage.V >= c.KVHigh, ep.State.KVUsage.OK
	}},
	{func(c Config) string { return "queueing (waiting > " + num(c.WaitingHigh) + ")" }, func(c Config, ep *Endpoint) (bool, bool) {
		return ep.State.Waiting.OK && ep.State.Waiting.V > c.WaitingHigh, ep.State.Waiting.OK
	}},
	{func(c Config) string { return "over the TTFT SLO (p99 > " + secs(c.SLOTTFT.Seconds()) + ")" }, func(c Config, ep *Endpoint) (bool, bool) {
		p := ep.State.Latency[model.TTFT].P99
		return p.OK && c.SLOTTFT > 0 && p.V > c.SLOTTFT.Seconds(), p.OK && c.SLOTTFT > 0
	}},
	{func(c Config) string { return "preempting (> " + num(c.PreemptPS) + "/s)" }, func(c Config, ep *Endpoint) (bool, bool) {
		p := ep.State.PreemptionsPS
		return p.OK && p.V > c.PreemptPS, p.OK
	}},
}

// ruleShare: how much of each model's fleet shows each symptom, in one
// fleet-wide finding ("7 of 20 replicas of llama-3-8b KV-bound"): a
// symptom on most replicas is capacity, on one or two it is those
// replicas. Replicas without the number are named as not counted.
func ruleShare(e *env) []Finding {
	groups := e.replicas()
	var ev []Evidence
	var titles []string
	sev := model.SevInfo
	for _, m := range sortedModels(groups) {
		eps := groups[m]
		var words []string
		for _, s := range symptoms {
			n, known := 0, 0
			for _, ep := range eps {
				h, k := s.has(e.cfg, ep)
				if k {
					known++
				}
				if h {
					n++
				}
			}
			if n == 0 {
				continue
			}
			word := s.word(e.cfg)
			text := fmt.Sprintf("%d of %d replicas of %s %s", n, len(eps), m, word)
			if known < len(eps) {
				text += fmt.Sprintf(" (%d without the number, not counted)", len(eps)-known)
			}
			ev = append(ev, Evidence{Text: text, Source: "each replica's state over the window"})
			words = append(words, fmt.Sprintf("%d/%d %s", n, len(eps), strings.SplitN(word, " (", 2)[0]))
			if 2*n >= len(eps) {
				sev = model.SevWarn
			}
		}
		if len(words) > 0 {
			titles = append(titles, m+": "+strings.Join(words, ", "))
		}
	}
	if len(ev) == 0 {
		return nil
	}
	title := "fleet: " + strings.Join(titles, "; ")
	if len(titles) > 2 {
		title = "fleet: " + strings.Join(titles[:2], "; ") + fmt.Sprintf("; +%d more models", len(titles)-2)
	}
	return []Finding{{Category: Routing, Severity: sev, Title: title, Evidence: ev,
		Cause: "a symptom on most replicas of a model is the model's capacity (add replicas or change the engine's flags everywhere); on a few it is those replicas (routing, hardware, flags)",
		Actions: []Action{{Change: "open the replicas with the symptom (the fleet view sorts by it) and follow their own findings",
			Why: "the per-replica findings carry the flags to change", TradeOff: "none"}}}}
}
