package diagnosis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The routing findings (issue 26): what no single replica shows, read
// across a pool (one model, one prefill/decode role). Each compares only
// members read within RouteLag and past their own cold start, and holds
// for RouteHold (never less than RouteLag): a router's gauges and an
// engine's disagree for seconds by design, and that lag is not skew.
func init() {
	register(
		rule{id: "pool_starved", checks: "no pool has idle workers while others are full", needs: needReplicas, hold: holdRoute, eval: rulePoolStarved},
		rule{id: "pool_queue_skew", checks: "queues even across each pool", needs: needReplicas, hold: holdRoute, eval: rulePoolQueueSkew},
		rule{id: "prefix_pileup", checks: "no hot prefix piled onto one engine while its peers have room", needs: needReplicas, hold: holdRoute, eval: rulePrefixPileup},
		rule{id: "one_worker", checks: "no pool sends (nearly) all its requests to one worker", needs: needReplicas, hold: holdRoute, eval: ruleOneWorker},
		rule{id: "pd_imbalance", checks: "prefill and decode pools of each model both keep up", needs: needReplicas, hold: holdRoute, eval: rulePDImbalance},
		rule{id: "kv_transfer_failures", checks: "no KV hand-over fails", needs: needMetrics, hold: holdRoute, eval: ruleKVTransferFailures},
		rule{id: "kv_transfer_stall", checks: "KV transfer a small part of each decode instance's TTFT", needs: needMetrics, hold: holdRoute, eval: ruleKVTransferStall},
	)
}

func holdRoute(c Config) time.Duration { return max(c.RouteHold, c.RouteLag) }

// settled reports whether a pool member's gauges can be compared with its
// peers': read within RouteLag, and not within RouteLag of its start (an
// engine reads 0 running for seconds after it starts while the router
// already counts requests to it).
func (e *env) settled(ep *Endpoint) bool {
	now, lag := e.now(), e.cfg.RouteLag
	if ep.isDown() || !ep.State.Running.OK || (!ep.LastOK.IsZero() && now.Sub(ep.LastOK) > lag) {
		return false
	}
	if s := ep.State.Started; !s.IsZero() && now.Sub(s) < lag {
		return false
	}
	if u := ep.UpSince; !u.IsZero() && now.Sub(u) < lag {
		return false
	}
	return true
}

// routePools are the pools with two or more settled members, by name,
// each sorted by URL; built once per evaluation (four rules read them).
func (e *env) routePools() ([]string, map[string][]*Endpoint) {
	e.cross()
	if e.poolsDone {
		return e.poolNames, e.pools
	}
	out := map[string][]*Endpoint{}
	e.settledIn = map[string][]*Endpoint{}
	for name, eps := range e.replicas() {
		in := make([]*Endpoint, 0, len(eps))
		for _, ep := range eps {
			if e.settled(ep) {
				in = append(in, ep)
			}
		}
		e.settledIn[name] = in
		if len(in) >= 2 {
			out[name] = sortedBy(in, func(a, b *Endpoint) bool { return a.URL < b.URL })
		}
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	e.poolNames, e.pools, e.poolsDone = names, out, true
	return names, out
}

// sortedBy is a copy of eps in less's order, stable.
func sortedBy(eps []*Endpoint, less func(a, b *Endpoint) bool) []*Endpoint {
	out := slices.Clone(eps)
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// poolWord is how a pool's members are named: "decode workers",
// "prefill workers", "replicas".
func poolWord(eps []*Endpoint) string {
	if r, _ := eps[0].PDRole(); r == model.RolePrefill || r == model.RoleDecode {
		return string(r) + " workers"
	}
	return "replicas"
}

// poolOf names a pool in a title: "decode workers of m" (its role said
// once, not again as the pool's "(decode)").
func poolOf(eps []*Endpoint) string { return poolWord(eps) + " of " + eps[0].Model() }

// urlList names at most three endpoints, without their scheme:
// "d3:8000, d4:8000 and 2 more".
func urlList(eps []*Endpoint) string {
	ns := make([]string, 0, min(len(eps), 3))
	for i, ep := range eps {
		if i == 3 {
			return strings.Join(ns, ", ") + fmt.Sprintf(" and %d more", len(eps)-3)
		}
		u := strings.TrimPrefix(strings.TrimPrefix(ep.URL, "http://"), "https://")
		ns = append(ns, u)
	}
	return strings.Join(ns, ", ")
}

// layerInFront is the router llmtop reads in front of a pool: the one
// whose worker list names a member, or, where none lists its workers, the
// one kind of router watched (nil when unknown or more than one kind).
func (e *env) layerInFront(eps []*Endpoint) *engines.Layer {
	e.cross()
	var listing, any *engines.Layer
	listed, kinds := 0, 0
	for ep := range each(e.all) {
		ly := engines.LayerByWhat(ep.Identity.Layer)
		if ly == nil || ly.Role != engines.RoleRouter || ep.isDown() {
			continue
		}
		if any != ly {
			any, kinds = ly, kinds+1
		}
		for _, b := range ep.Identity.Backends {
			if poolHas(eps, b.Server) {
				if listing != ly {
					listing, listed = ly, listed+1
				}
				break
			}
		}
	}
	switch {
	case listed == 1:
		return listing
	case listed == 0 && kinds == 1:
		return any
	}
	return nil
}

// watchRouter leads a routing finding's advice where llmtop reads no
// router: which router sends the pool its requests is then unknown, so the
// advice names every router's check and setting; watched, the router is
// named and its own word read (its worker list, health and queue).
var watchRouter = Action{Change: "watch the router in front of this pool too (its URL beside the engines', or --prometheus where it is scraped)",
	Why:      "llmtop reads no router here, so it cannot tell which one routes this pool: the advice below names every router's; watched, the router's own check and setting are named and its worker list and health are read",
	TradeOff: "none"}

// routerAdvice is a routing finding's actions, led by watchRouter where
// no router is watched at all.
func (e *env) routerAdvice(actions ...Action) []Action {
	for ep := range each(e.in.Endpoints) {
		if ly := engines.LayerByWhat(ep.Identity.Layer); ly != nil && ly.Role == engines.RoleRouter {
			return actions
		}
	}
	return append([]Action{watchRouter}, actions...)
}

// poolHas reports whether a router's name for a worker is a pool member.
func poolHas(eps []*Endpoint, server string) bool {
	hp := hostPort(server)
	for i := range eps {
		if hp != "" && hostPort(eps[i].URL) == hp {
			return true
		}
	}
	return false
}

// memberLine is one member's gauges for the evidence.
func memberLine(ep Endpoint) string {
	s := fmt.Sprintf("%s: running %s, waiting %s", ep.URL, num(ep.State.Running.V), num(ep.State.Waiting.Or(0)))
	if ep.State.KVUsage.OK {
		s += fmt.Sprintf(", KV %s", pct(ep.State.KVUsage.V))
	}
	return s
}

// members lists at most six members' lines.
func members(eps []*Endpoint) []Evidence {
	var out []Evidence
	for i, ep := range eps {
		if i == 6 {
			out = append(out, Evidence{Text: fmt.Sprintf("and %d more", len(eps)-6), Source: "running/waiting/KV of each member"})
			break
		}
		out = append(out, Evidence{Text: memberLine(*ep), Source: "running/waiting/KV of each member"})
	}
	return out
}

// starved: some members idle (nothing running, nothing waiting) while
// others are full (KV at RouteFullKV) or queue. Idle beside a queue is
// evidence only under load: a pool with fewer than RouteQueueMin requests
// in all (a prefill pool between prompts: one running, one waiting) has an
// idle member by chance, so it is not judged (few).
func starved(e *env, eps []*Endpoint) (idle, full []*Endpoint, few bool) {
	var load float64
	kvFull := false
	for _, ep := range eps {
		st := &ep.State
		load += loadOf(ep)
		switch {
		case st.Running.V == 0 && st.Waiting.Or(0) == 0:
			idle = append(idle, ep)
		case st.KVUsage.OK && st.KVUsage.V >= e.cfg.RouteFullKV:
			kvFull = true
			full = append(full, ep)
		case st.Waiting.Or(0) >= 1:
			full = append(full, ep)
		}
	}
	if len(full) == 0 {
		return nil, nil, false
	}
	if !kvFull && load < e.cfg.RouteQueueMin {
		return nil, nil, len(idle) > 0
	}
	return idle, full, false
}

func rulePoolStarved(e *env) []Finding {
	names, pools := e.routePools()
	var out []Finding
	for _, name := range names {
		eps := pools[name]
		idle, full, few := starved(e, eps)
		if few {
			var load float64
			for _, ep := range eps {
				load += loadOf(ep)
			}
			e.lack(eps[0], fmt.Sprintf("idle %s not checked, because too few requests: %s in flight across the pool, under route_queue_min %s",
				poolOf(eps), num(load), num(e.cfg.RouteQueueMin)))
			continue
		}
		if len(idle) == 0 || allEjected(e, idle) {
			continue // none idle, or router_ejected_worker says why
		}
		// Requests wait on the full workers while the idle ones could
		// serve them: capacity paid for and unused.
		sev := model.SevWarn
		for _, f := range full {
			if f.State.Waiting.Or(0) >= 1 {
				sev = model.SevCrit
			}
		}
		ly := e.layerInFront(eps)
		others := make([]string, 0, len(idle)-1)
		for _, ep := range idle[1:] {
			others = append(others, ep.URL)
		}
		out = append(out, Finding{Endpoint: idle[0].URL, Others: others, Pool: name, Category: Routing, Severity: sev,
			Title:    fmt.Sprintf("%d of %d %s idle while %s loaded: %s", len(idle), len(eps), poolOf(eps), theOthers(len(eps)-len(idle)), urlList(idle)),
			Evidence: members(eps),
			Cause: "the router sends these workers nothing: they are missing from its worker list (not registered, marked unhealthy, " +
				"a tripped circuit breaker), or its cache-aware score keeps sending requests where their prefix is cached, full or not",
			Actions: e.routerAdvice(
				Action{Change: "check " + engines.RouteHealth(ly), Why: "a worker the router does not list or thinks unhealthy gets no traffic", TradeOff: "none"},
				Action{Change: engines.RouteBalanceOf(ly), Why: "load then counts beside the cache overlap", TradeOff: "fewer prefix-cache hits"},
			)})
	}
	return out
}

// theOthers names the loaded rest of a pool: "the other is", "the other 3 are".
func theOthers(n int) string {
	if n == 1 {
		return "the other is"
	}
	return fmt.Sprintf("the other %d are", n)
}

// allEjected reports whether a router has taken every one of eps out.
func allEjected(e *env, eps []*Endpoint) bool {
	for _, ep := range eps {
		if !e.ejectedBy(ep.URL) {
			return false
		}
	}
	return true
}

// cv is the coefficient of variation of xs (0 when their mean is 0).
func cv(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs))) / mean
}

// queueSkew: the members' queues spread (coefficient of variation at
// RouteQueueCV, the busiest at RouteQueueMin, the least a quarter of it or
// less). Members queued sorted busiest first.
func queueSkew(e *env, eps []*Endpoint) (float64, bool) {
	qs := make([]float64, 0, len(eps))
	for i := range eps {
		if !eps[i].State.Waiting.OK {
			return 0, false
		}
		qs = append(qs, eps[i].State.Waiting.V)
	}
	hi, lo := slices.Max(qs), slices.Min(qs)
	c := cv(qs)
	return c, hi >= e.cfg.RouteQueueMin && c >= e.cfg.RouteQueueCV && lo <= hi/4
}

// busiestFirst is eps sorted by their queues, the deepest first.
func busiestFirst(eps []*Endpoint) []*Endpoint {
	return sortedBy(eps, func(a, b *Endpoint) bool { return a.State.Waiting.V > b.State.Waiting.V })
}

func rulePoolQueueSkew(e *env) []Finding {
	names, pools := e.routePools()
	var out []Finding
	for _, name := range names {
		eps := pools[name]
		if idle, _, _ := starved(e, eps); len(idle) > 0 || len(eps) < 3 {
			continue // pool_starved says it; two members are routing_skew's
		}
		c, ok := queueSkew(e, eps)
		if !ok {
			continue
		}
		sorted := busiestFirst(eps)
		qs := make([]string, len(sorted))
		for i, ep := range sorted {
			qs[i] = num(ep.State.Waiting.V)
		}
		actions := []Action{{Change: engines.RoutePrefillQueue, Why: "a router blind to queue depth keeps sending to the deepest queue",
			TradeOff: "fewer prefix-cache hits where the cache decided"}, diffReplicas}
		out = append(out, Finding{Endpoint: sorted[0].URL, Category: Routing, Severity: model.SevWarn,
			Title:    fmt.Sprintf("queues skewed across the %s: waiting %s", poolOf(eps), strings.Join(qs, " / ")),
			Evidence: append([]Evidence{{Text: fmt.Sprintf("coefficient of variation of the queues %.2f (at %.2f it is skew)", c, e.cfg.RouteQueueCV), Source: "waiting of each member"}}, members(sorted)...),
			Cause: "the router keeps sending to members whose queue is already deep: a prefix- or session-affine policy, " +
				"or one that reads load the engines report seconds late",
			Actions: actions})
	}
	return out
}

// loadOf is a member's running + waiting.
func loadOf(ep *Endpoint) float64 { return ep.State.Running.V + ep.State.Waiting.Or(0) }

// pileup: one member holds RouteHotShare of the pool's load and queues,
// another has room (KV under 60 % of full), and the busy one's prefix hit
// rate is RouteHotHit above every other's.
func pileup(e *env, eps []*Endpoint) (*Endpoint, float64, bool) {
	var total float64
	hot := eps[0]
	for _, ep := range eps {
		total += loadOf(ep)
		if loadOf(ep) > loadOf(hot) {
			hot = ep
		}
	}
	if total == 0 || loadOf(hot)/total < e.cfg.RouteHotShare || hot.State.Waiting.Or(0) < 1 || !hot.State.PrefixHit.OK {
		return nil, 0, false
	}
	room := false
	peerHit := -1.0
	for _, ep := range eps {
		if ep.URL == hot.URL {
			continue
		}
		if ep.State.KVUsage.OK && ep.State.KVUsage.V < 0.6*e.cfg.RouteFullKV {
			room = true
		}
		if ep.State.PrefixHit.OK && ep.State.PrefixHit.V > peerHit {
			peerHit = ep.State.PrefixHit.V
		}
	}
	if !room || peerHit < 0 || hot.State.PrefixHit.V-peerHit < e.cfg.RouteHotHit {
		return nil, 0, false
	}
	return hot, loadOf(hot) / total, true
}

func rulePrefixPileup(e *env) []Finding {
	names, pools := e.routePools()
	var out []Finding
	for _, name := range names {
		eps := pools[name]
		hot, share, ok := pileup(e, eps)
		if !ok {
			continue
		}
		ev := []Evidence{{Text: fmt.Sprintf("%s holds %s of the pool's requests (running+waiting), prefix-cache hits %s; its peers' best %s",
			hot.URL, pct(share), pct(hot.State.PrefixHit.V), pct(peerBestHit(hot, eps))), Source: "running/waiting and prefix-cache hit rate of each member", Window: hot.State.Window}}
		out = append(out, Finding{Endpoint: hot.URL, Category: Routing, Severity: model.SevWarn,
			Title:    fmt.Sprintf("a hot prefix piled onto one of %d %s", len(eps), poolOf(eps)),
			Evidence: append(ev, members(eps)...),
			Cause: "cache-aware routing sends every request with the hot prefix where it is cached, past the point where that engine queues " +
				"while its peers have room",
			Actions: e.routerAdvice(Action{Change: engines.RouteBalanceOf(e.layerInFront(eps)), Why: "past a load gap the router spreads the prefix; the peers then cache it too",
				TradeOff: "a few more prefills of the prefix"})})
	}
	return out
}

func peerBestHit(hot *Endpoint, eps []*Endpoint) float64 {
	best := 0.0
	for _, ep := range eps {
		if ep.URL != hot.URL && ep.State.PrefixHit.OK && ep.State.PrefixHit.V > best {
			best = ep.State.PrefixHit.V
		}
	}
	return best
}

// oneWorker: one member finished RouteOneShare of the pool's requests over
// the window (at least RouteMinRPS in all).
func oneWorker(e *env, eps []*Endpoint) (*Endpoint, float64, float64, bool) {
	var total float64
	top := eps[0]
	for _, ep := range eps {
		if !ep.State.RequestsPS.OK {
			return nil, 0, 0, false
		}
		total += ep.State.RequestsPS.V
		if ep.State.RequestsPS.V > top.State.RequestsPS.V {
			top = ep
		}
	}
	if total < e.cfg.RouteMinRPS || top.State.RequestsPS.V/total < e.cfg.RouteOneShare {
		return nil, 0, 0, false
	}
	return top, top.State.RequestsPS.V / total, total, true
}

func ruleOneWorker(e *env) []Finding {
	names, pools := e.routePools()
	var out []Finding
	for _, name := range names {
		eps := pools[name]
		if _, _, ok := pileup(e, eps); ok {
			continue // prefix_pileup says why
		}
		top, share, total, ok := oneWorker(e, eps)
		if !ok {
			continue
		}
		var ev []Evidence
		for _, ep := range eps {
			ev = append(ev, Evidence{Text: fmt.Sprintf("%s: %s req/s", ep.URL, num(ep.State.RequestsPS.V)), Source: "finished requests of each member", Window: ep.State.RateWindow})
		}
		out = append(out, Finding{Endpoint: top.URL, Category: Routing, Severity: model.SevWarn,
			Title: fmt.Sprintf("%s of the requests to the %d %s go to one (%s of %s req/s)", pct(share), len(eps), poolOf(eps),
				num(top.State.RequestsPS.V), num(total)),
			Evidence: ev,
			Cause: "the router's load signal reads the same for every worker, so its tie-break picks the first every time " +
				"(a gRPC path whose load counters stay at 0), or a session or hash key is the same for every request",
			Actions: e.routerAdvice(Action{Change: "read " + engines.RouteLoadSignal, Why: "a balanced pool needs a load signal that moves", TradeOff: "none"},
				Action{Change: engines.RouteBalanceOf(e.layerInFront(eps)), Why: "load then counts", TradeOff: "fewer prefix-cache hits"})})
	}
	return out
}

func ruleKVTransferStall(e *env) []Finding {
	var out []Finding
	judged := 0
	defer func() { e.idle = judged == 0 }()
	for ep := range each(e.withMetrics()) {
		xfer, ok := ep.State.Latency[model.KVTransfer]
		role, _ := ep.PDRole()
		if !ok || !xfer.Exposed {
			if role == model.RoleDecode {
				e.lack(ep, "KV transfer time (this decode instance serves no KV transfer histogram: "+engines.VLLM.Name+"'s NIXL metrics, "+
					engines.SGLang.Name+"'s "+strings.TrimPrefix(engines.SGLangKVTransferLat, engines.SGLang.Prefix())+"): the share of its TTFT spent waiting for the KV not checked")
			}
			continue // no hand-over here to time
		}
		judged++
		ttft := ep.State.Latency[model.TTFT]
		ttftFrom, whose := ep.State.From[string(model.TTFT)], ""
		if role == model.RolePrefill {
			// SGLang observes its transfers on the sending side, from the
			// request's entry into the prefill's transfer queue: the wait
			// is the decode side's TTFT's.
			d, from, ok := e.decodeTTFT(ep.Model())
			if !ok {
				continue
			}
			ttft, ttftFrom, whose = d, from, "the decode side's "
		}
		share, stalled := kvShare(e, xfer, ttft)
		if !stalled {
			continue
		}
		ev := []Evidence{
			{Text: fmt.Sprintf("KV transfer mean %s over %s transfers", secs(xfer.Mean.V), num(xfer.Count)), Source: ep.State.From[string(model.KVTransfer)], Window: xfer.Window},
			{Text: fmt.Sprintf("%sTTFT mean %s", whose, secs(ttft.Mean.V)), Source: ttftFrom, Window: ttft.Window},
		}
		ev = append(ev, kvDetail(*ep)...)
		if role == model.RolePrefill {
			_, _, decode := e.pdPools()
			for _, d := range decode[ep.Model()] {
				ev = append(ev, kvDetail(*d)...)
			}
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Routing, Severity: model.SevWarn,
			Title:    fmt.Sprintf("KV transfer is %s of %sTTFT (%s of %s): the decode side waits for its KV", pct(share), whose, secs(xfer.Mean.V), secs(ttft.Mean.V)),
			Evidence: ev,
			Cause: "the decode instance waits for the prefill's KV cache: the hand-over is slow or stalls (a transport that fell back to TCP, " +
				"a saturated link, transfers that fail and expire); its TTFT is mostly that wait, not prefill or queueing",
			Actions: []Action{{Change: "check " + engines.KVTransferCheck, Why: "the wait is the transfer, not the engines' compute", TradeOff: "none"},
				{Change: "judge TTFT at the router (its end-to-end TTFT), not per instance", Why: "the prefill and decode instances each see part of it", TradeOff: "none"}}})
	}
	return out
}

// decodeTTFT is the TTFT mean of a model's settled decode workers,
// weighted by their requests (false when none has one).
func (e *env) decodeTTFT(m string) (model.Dist, string, bool) {
	_, _, decode := e.pdPools()
	var sum, n float64
	var from string
	out := model.Dist{Exposed: true}
	for _, d := range decode[m] {
		t := d.State.Latency[model.TTFT]
		if t.Mean.OK && t.Count > 0 {
			sum += t.Mean.V * t.Count
			n += t.Count
			from = d.State.From[string(model.TTFT)]
			out.Window = max(out.Window, t.Window)
		}
	}
	if n == 0 {
		return model.Dist{}, "", false
	}
	out.Mean, out.Count = model.Some(sum/n), n
	return out, from, true
}

// pdPools pairs each model's settled prefill and decode members.
func (e *env) pdPools() (models []string, prefill, decode map[string][]*Endpoint) {
	e.cross()
	prefill, decode = map[string][]*Endpoint{}, map[string][]*Endpoint{}
	eps := e.withMetrics()
	for i := range eps {
		ep := &eps[i]
		if !e.settled(ep) {
			continue
		}
		switch r, _ := ep.PDRole(); r {
		case model.RolePrefill:
			prefill[ep.Model()] = append(prefill[ep.Model()], ep)
		case model.RoleDecode:
			decode[ep.Model()] = append(decode[ep.Model()], ep)
		}
	}
	for m := range prefill {
		if len(decode[m]) > 0 {
			models = append(models, m)
		}
	}
	sort.Strings(models)
	return models, prefill, decode
}

// rulePDImbalance: one side of a disaggregated model is the bottleneck.
// Prefill-starved: every prefill worker busy with a queue (mean
// RouteQueueMin) while every decode worker has room (KV under half of
// full, nothing waiting). Decode-starved: every decode worker full or
// queueing while no prefill worker queues. The ratio is each system's
// lever: Dynamo's planner scales prefill on TTFT and decode on ITL; llm-d
// alerts on prefill ÷ decode running above 3 for 10 minutes.
func rulePDImbalance(e *env) []Finding {
	models, prefill, decode := e.pdPools()
	var out []Finding
	for _, m := range models {
		ps, ds := prefill[m], decode[m]
		var pWait, pRun, dRun float64
		pBusy, dRoom, dFull, pQueue := true, true, true, false
		for _, ep := range ps {
			pWait += ep.State.Waiting.Or(0)
			pRun += ep.State.Running.V
			pBusy = pBusy && ep.State.Running.V > 0
			pQueue = pQueue || ep.State.Waiting.Or(0) >= 1
		}
		for _, ep := range ds {
			dRun += ep.State.Running.V
			kv := ep.State.KVUsage
			// SGLang's decode side holds requests it has no KV space to
			// receive into in its prealloc queue: full, whatever its
			// waiting queue says.
			prealloc := ep.State.PreallocQ.Or(0)
			dRoom = dRoom && kv.OK && kv.V < 0.5*e.cfg.RouteFullKV && ep.State.Waiting.Or(0) == 0 && prealloc == 0
			dFull = dFull && ((kv.OK && kv.V >= e.cfg.RouteFullKV) || ep.State.Waiting.Or(0) >= 1 || prealloc >= 1)
		}
		ratio := fmt.Sprintf("%dP:%dD", len(ps), len(ds))
		ev := append(members(ps), members(ds)...)
		for _, ep := range append(append([]*Endpoint(nil), ps...), ds...) {
			ev = append(ev, kvDetail(*ep)...)
		}
		switch {
		case pBusy && pWait/float64(len(ps)) >= e.cfg.RouteQueueMin && dRoom:
			out = append(out, Finding{Endpoint: ps[0].URL, Category: Routing, Severity: model.SevWarn,
				Title:    fmt.Sprintf("prefill-starved: %s prefill queue %s per worker while decode has room (%s)", m, num(pWait/float64(len(ps))), ratio),
				Evidence: ev,
				Cause:    "the prefill pool cannot keep up with the prompts while the decode pool waits for work: too few prefill workers for this prompt length",
				Actions: []Action{{Change: fmt.Sprintf("add a prefill worker (now %s), or move one from decode", ratio),
					Why:      "prefill is the bottleneck: decode sits idle waiting for KV (Dynamo's planner scales prefill on TTFT; llm-d alerts when prefill ÷ decode running stays above 3)",
					TradeOff: "a GPU moved from decode lowers the decode pool's headroom"}}})
		case dFull && !pQueue:
			out = append(out, Finding{Endpoint: ds[0].URL, Category: Routing, Severity: model.SevWarn,
				Title:    fmt.Sprintf("decode-starved: every decode worker of %s full or queueing while prefill keeps up (%s)", m, ratio),
				Evidence: ev,
				Cause:    "the decode pool holds more sequences than its KV and batch allow while prefill hands work over freely: too few decode workers for these outputs",
				Actions: []Action{{Change: fmt.Sprintf("add a decode worker (now %s), or move one from prefill", ratio),
					Why:      "decode is the bottleneck: its queue and KV fill while prefill has room (Dynamo's planner scales decode on ITL)",
					TradeOff: "a GPU moved from prefill raises TTFT under long prompts"}}})
		}
	}
	return out
}

// ruleKVTransferFailures: KV hand-overs fail (counted where performed, the
// decode side): each failed request is recomputed or fails.
func ruleKVTransferFailures(e *env) []Finding {
	var out []Finding
	judged := 0
	defer func() { e.idle = judged == 0 }()
	for ep := range each(e.withMetrics()) {
		r := ep.State.KVFailPS
		if !r.OK {
			continue // no hand-over counted here: not a prefill/decode member, or not exposed
		}
		judged++
		if r.V <= 0 {
			continue
		}
		n := r.V * ep.State.RateWindow.Seconds()
		out = append(out, Finding{Endpoint: ep.URL, Category: Routing, Severity: model.SevWarn,
			Title: fmt.Sprintf("KV transfers failing: %s/s (about %s in the window)", num(r.V), num(math.Round(n))),
			Evidence: []Evidence{{Text: fmt.Sprintf("%s failed KV transfers per second", num(r.V)),
				Source: ep.State.From[string(model.KVTransferFailures)], Window: ep.State.RateWindow}},
			Cause: "the decode side cannot pull the prefill's KV: the transport fails (a peer gone, a network or NIXL/Mooncake backend error); " +
				"each failed request is retried, recomputed or errors",
			Actions: []Action{{Change: "check " + engines.KVTransferCheck, Why: "the failures are the transfer path's, not the engines' compute", TradeOff: "none"}}})
	}
	return out
}

// kvStall is the share of an endpoint's TTFT its KV transfers take, and
// whether that is a stall (KVStallShare of a TTFT mean of KVStallMin or
// more).
func kvStall(e *env, ep Endpoint) (float64, bool) {
	return kvShare(e, ep.State.Latency[model.KVTransfer], ep.State.Latency[model.TTFT])
}

// kvShare is the share of a TTFT a transfer mean takes, and whether that
// is a stall.
func kvShare(e *env, xfer, ttft model.Dist) (float64, bool) {
	if !xfer.Exposed || !xfer.Mean.OK || !ttft.Mean.OK || ttft.Mean.V < e.cfg.KVStallMin.Seconds() || ttft.Mean.V <= 0 {
		return 0, false
	}
	share := math.Min(xfer.Mean.V/ttft.Mean.V, 1)
	return share, share >= e.cfg.KVStallShare
}

// routedPool reports whether a routing rule speaks for the pool (a
// replicaGroups name), so the general load skew does not say it twice.
func routedPool(e *env, pool string) bool {
	e.routePools()
	in := e.settledIn[pool] // its settled members, in the group's order
	if len(in) < 2 {
		return false
	}
	if idle, _, _ := starved(e, in); len(idle) > 0 {
		return true
	}
	if _, ok := queueSkew(e, in); ok && len(in) >= 3 {
		return true
	}
	if _, _, ok := pileup(e, in); ok {
		return true
	}
	_, _, _, ok := oneWorker(e, in)
	return ok
}
