package diagnosis

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func init() {
	register(
		rule{id: "routing_skew", checks: "load and latency even across replicas of one model", needs: needReplicas, hold: holdDefault, eval: ruleSkew},
		rule{id: "replica_outlier", checks: "each replica's TTFT, TPOT, KV and queue near its model's median", needs: needReplicas, hold: holdDefault, eval: ruleOutlier},
		rule{id: "fleet_share", checks: "how many replicas of each model share a symptom", needs: needReplicas, hold: holdDefault, eval: ruleShare},
		rule{id: "release_regression", checks: "latency after a restart vs before, at similar load", needs: needMetrics, hold: holdNone, local: true, eval: ruleRegression},
	)
}

// replicaGroups groups endpoints by pool (served model and prefill/decode
// role), keeping groups of two or more. The groups point into eps: an
// Endpoint is 2 KiB, and copies of a fleet's were megabytes per refresh.
func replicaGroups(eps []Endpoint) map[string][]*Endpoint {
	// counted first, so each group is one allocation of its size
	pools := make([]string, len(eps))
	n := map[string]int{}
	for i := range eps {
		if m := eps[i].Pool(); m != "" {
			pools[i] = m
			n[m]++
		}
	}
	g := map[string][]*Endpoint{}
	for i := range eps {
		if m := pools[i]; n[m] >= 2 {
			if g[m] == nil {
				g[m] = make([]*Endpoint, 0, n[m])
			}
			g[m] = append(g[m], &eps[i])
		}
	}
	return g
}

// replicas is replicaGroups of the endpoints with metrics, built once per
// evaluation (at 500 endpoints, building it for every rule that asks was
// most of the rules' allocations).
func (e *env) replicas() map[string][]*Endpoint {
	e.cross()
	if !e.groupsDone {
		e.groups, e.groupsDone = replicaGroups(e.withMetrics()), true
	}
	return e.groups
}

// replicasLine says why no replicas were compared: plain (fewer than two
// endpoints serve one model), or, where two or more serve one model but
// fewer than two of them have metrics, which serve it and which have none
// ("2 endpoints serve small.gguf, but … has no metrics, so they are not
// compared": two llama-servers of one GGUF, one without --metrics).
func (e *env) replicasLine(plain string) string {
	// the engines: a router or proxy without metrics of its own serves
	// the model too, but is no replica
	var engs []Endpoint
	for ep := range each(e.in.Endpoints) {
		if ep.Identity.Layer == "" || ep.State.Samples > 0 {
			engs = append(engs, *ep)
		}
	}
	served := replicaGroups(engs)
	if len(served) == 0 {
		return plain
	}
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(served)) {
		var dark []string
		for _, ep := range served[m] {
			if ep.State.Samples == 0 {
				dark = append(dark, ep.URL)
			}
		}
		n := len(served[m])
		var who string
		switch {
		case len(dark) == n && n == 2:
			who = "neither has metrics"
		case len(dark) == n:
			who = "none of them has metrics"
		case len(dark) == 1:
			who = dark[0] + " has no metrics"
		default:
			who = list(dark) + " have no metrics"
		}
		parts = append(parts, fmt.Sprintf("%d endpoints serve %s, but %s", n, model.Clean(m), who))
	}
	return "replicas (" + strings.Join(parts, "; ") + ", so they are not compared: that needs two with metrics)"
}

func load(ep *Endpoint) (float64, bool) {
	if !ep.State.Running.OK {
		return 0, false
	}
	return ep.State.Running.V + ep.State.Waiting.Or(0), true
}

func ruleSkew(e *env) []Finding {
	groups := e.replicas()
	models := make([]string, 0, len(groups))
	for m := range groups {
		models = append(models, m)
	}
	sort.Strings(models)
	var out []Finding
	for _, m := range models {
		if routedPool(e, m) {
			continue // a routing rule names the pattern
		}
		if f, ok := loadSkew(e, m, groups[m]); ok {
			out = append(out, f)
		} else if f, ok := latencySkew(e, m, groups[m]); ok {
			out = append(out, f)
		}
	}
	return out
}

// diffReplicas is the advice shared by both kinds of skew.
var diffReplicas = Action{Change: "diff the replicas' flags and versions (the explain screen shows cache_config_info)",
	Why: "a replica with a smaller KV pool or cap drains slower", TradeOff: "none"}

// loadSkew: one replica holds SkewRatio× the requests of another.
func loadSkew(e *env, m string, eps []*Endpoint) (Finding, bool) {
	var hi, lo *Endpoint
	hiL, loL := -1.0, math.Inf(1)
	for _, ep := range eps {
		l, ok := load(ep)
		if !ok {
			continue
		}
		if l > hiL {
			hi, hiL = ep, l
		}
		if l < loL {
			lo, loL = ep, l
		}
	}
	if hiL < 0 || hi.URL == lo.URL || hiL-loL < 4 || hiL < e.cfg.SkewRatio*math.Max(loL, 1) {
		return Finding{}, false
	}
	// The gauges are this instant's; the window's generated tokens must
	// agree, or it is the churn of a balanced pool (requests of different
	// lengths finishing at different times), not the router.
	if a, b := hi.State.GenTPS, lo.State.GenTPS; a.OK && b.OK && a.V < skewWindowRatio*b.V {
		return Finding{}, false
	}
	ev := []Evidence{{Text: fmt.Sprintf("%s: running+waiting %s; %s: %s", hi.URL, num(hiL), lo.URL, num(loL)), Source: "running/waiting of each replica"}}
	if a, b := hi.State.Latency[model.TTFT].P90, lo.State.Latency[model.TTFT].P90; a.OK && b.OK {
		ev = append(ev, Evidence{Text: fmt.Sprintf("TTFT p90≈%s vs %s", secs(a.V), secs(b.V)), Source: "ttft per replica", Window: hi.State.Latency[model.TTFT].Window})
	}
	return Finding{Endpoint: hi.URL, Category: Routing, Severity: model.SevWarn,
		Title:    fmt.Sprintf("load skewed across %d replicas of %s", len(eps), m),
		Evidence: ev,
		Cause:    "the router sends more to one replica: sticky sessions, round-robin blind to request length, or a replica slower to drain (different GPU or flags)",
		Actions: []Action{{Change: "route by load (least outstanding requests) or prefix-aware routing (e.g. " + engines.SGLang.Name + " router --policy cache_aware, " + engines.ProdStackRouter.Name + ")",
			Why: "round-robin ignores that requests differ in length", TradeOff: "prefix-aware routing trades some balance for cache hits"},
			diffReplicas}}, true
}

// skewWindowRatio is how much more the loaded replica must have generated
// over the window than the light one for an instant's load gap to be skew.
const skewWindowRatio = 1.5

// Latency skew must also be this large in absolute terms: a 2× gap between
// 20 ms and 40 ms TTFT is noise to a user, not a slow replica.
const (
	skewTTFTAbs = 0.1   // s
	skewITLAbs  = 0.010 // s
)

// latencySkew: replicas carry similar load (no loadSkew) but one answers
// SkewRatio× slower than another at p90, TTFT or ITL/TPOT: the slow one is
// different (GPU, throttling, flags), not the router.
func latencySkew(e *env, m string, eps []*Endpoint) (Finding, bool) {
	type pick func(*Endpoint) (model.Dist, string)
	ttft := func(ep *Endpoint) (model.Dist, string) { return ep.State.Latency[model.TTFT], "TTFT" }
	itl := func(ep *Endpoint) (model.Dist, string) { d, name, _ := itlDist(ep); return d, name }
	for _, c := range []struct {
		get pick
		abs float64
	}{{ttft, skewTTFTAbs}, {itl, skewITLAbs}} {
		var hi, lo *Endpoint
		var name string
		hiV, loV := -1.0, math.Inf(1)
		for _, ep := range eps {
			d, n := c.get(ep)
			if !d.P90.OK {
				continue
			}
			if d.P90.V > hiV {
				hi, hiV, name = ep, d.P90.V, n
			}
			if d.P90.V < loV {
				lo, loV = ep, d.P90.V
			}
		}
		if hiV < 0 || hi.URL == lo.URL || hiV-loV < c.abs || hiV < e.cfg.SkewRatio*loV {
			continue
		}
		hd, _ := c.get(hi)
		ev := []Evidence{{Text: fmt.Sprintf("%s p90≈%s on %s vs %s on %s", name, secs(hiV), hi.URL, secs(loV), lo.URL), Source: "latency per replica", Window: hd.Window}}
		if a, okA := load(hi); okA {
			if b, okB := load(lo); okB {
				ev = append(ev, Evidence{Text: fmt.Sprintf("at similar load: running+waiting %s vs %s", num(a), num(b)), Source: "running/waiting of each replica"})
			}
		}
		return Finding{Endpoint: hi.URL, Category: Routing, Severity: model.SevWarn,
			Title:    fmt.Sprintf("%s skewed across %d replicas of %s", name, len(eps), m),
			Evidence: ev,
			Cause:    "the same traffic is slower on one replica: a different GPU or driver, thermal or power throttling, another process on its GPU, or different flags",
			Actions: []Action{diffReplicas,
				{Change: "compare the replicas' GPU rows (clocks, throttle reasons, other processes' VRAM) and take the slow one out of rotation until it matches",
					Why: "a slow replica raises the fleet's tail latency for every request routed to it", TradeOff: "less capacity while it is out"}}}, true
	}
	return Finding{}, false
}

func ruleRegression(e *env) []Finding {
	var out []Finding
	judged := 0
	defer func() { e.idle = judged == 0 }() // no restart: nothing to compare
	for ep := range each(e.withMetrics()) {
		if ep.Runs != nil {
			f, ok, j := regressionFromRuns(e, *ep)
			if ok {
				out = append(out, f)
			}
			if j {
				judged++
			}
			continue
		}
		b := ep.Before
		rs := recentRestarts(e, ep)
		if b == nil || len(rs) == 0 {
			continue
		}
		judged++
		since := e.now().Sub(rs[len(rs)-1])
		var changes []string
		if ep.Identity.Version != "" && b.Version != "" && ep.Identity.Version != b.Version {
			changes = append(changes, "version "+b.Version+" → "+ep.Identity.Version)
		}
		if m := ep.Model(); m != "" && b.Model != "" && m != b.Model {
			changes = append(changes, "model "+b.Model+" → "+m)
		}
		changes = append(changes, infoDiff(b.Info, ep.State.Info)...)

		var ev []Evidence
		worse := false
		similar := b.Running.OK && ep.State.Running.OK &&
			math.Abs(ep.State.Running.V-b.Running.V) <= e.cfg.SimilarLoad*math.Max(b.Running.V, 1)
		cmp := func(name string, before model.Opt, d model.Dist) {
			if !before.OK || !d.P50.OK || d.Window > since || before.V <= 0 {
				return
			}
			r := d.P50.V / before.V
			ev = append(ev, Evidence{Text: fmt.Sprintf("%s p50≈%s after vs %s before (×%.2f)", name, secs(d.P50.V), secs(before.V), r), Source: metricSource(*ep, strings.ToLower(name)), Window: d.Window})
			if r >= e.cfg.RegressionRatio {
				worse = true
			}
		}
		if similar {
			cmp("TTFT", b.TTFT, ep.State.Latency[model.TTFT])
			d, _, _ := itlDist(ep)
			cmp("ITL", b.ITL, d)
			if b.GenTPS.OK && ep.State.GenTPS.OK && b.GenTPS.V > 0 {
				ev = append(ev, Evidence{Text: fmt.Sprintf("generation %s tok/s after vs %s before", num(ep.State.GenTPS.V), num(b.GenTPS.V)), Source: metricSource(*ep, "gen"), Window: ep.State.RateWindow})
			}
			ev = append(ev, Evidence{Text: fmt.Sprintf("at similar load: running %s now vs %s before", num(ep.State.Running.V), num(b.Running.V)), Source: metricSource(*ep, "running")})
		}
		if len(changes) == 0 && !worse {
			continue
		}
		for _, c := range changes {
			ev = append(ev, Evidence{Text: "changed: " + c, Source: "identity / engine config"})
		}
		f := Finding{Endpoint: ep.URL, Category: Regression, Severity: model.SevInfo, Title: "restart changed the deployment", Evidence: ev,
			Cause: "a restart brought a different release or configuration"}
		if worse {
			f.Severity, f.Title = model.SevWarn, "latency regressed after the restart"
			f.Cause = "at similar load the same traffic is slower than before the restart: the new release or configuration is the likely cause"
			f.Actions = []Action{{Change: "roll back the change listed in the evidence, or A/B it on one replica", Why: "isolates which change costs the latency", TradeOff: "none"}}
			if len(changes) == 0 {
				f.Cause = "at similar load the same traffic is slower than before the restart, with no change visible in version or cache config (check flags and driver)"
			}
		}
		out = append(out, f)
	}
	return out
}

// volatileInfo reports Info keys that are not configuration: they move by
// themselves on every start or request (the start time is Sample.Started,
// not Info, but an adapter or an older snapshot may still carry one).
func volatileInfo(k string) bool {
	switch k {
	case "engine", "pid", "process_start_time_seconds", "start_time", "started", "uptime", "expires_at":
		return true
	}
	return strings.HasSuffix(k, "_time_seconds") || strings.HasSuffix(k, "_at")
}

// infoDiff lists config labels that changed, ignoring ones that move by
// themselves on every start and ones unknown on either side.
func infoDiff(a, b map[string]string) []string {
	if a == nil || b == nil {
		return nil
	}
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		if volatileInfo(k) {
			continue
		}
		if a[k] == "" || b[k] == "" {
			// Unknown on one side (a baseline taken during a crash, a
			// label the other run did not expose) is no change:
			// model.ConfigDiff follows the same rule.
			continue
		}
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s %s → %s", k, a[k], b[k]))
		}
	}
	return out
}
