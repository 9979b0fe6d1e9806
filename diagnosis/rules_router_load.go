package diagnosis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The router's own word on how it spreads load, where the engines' own
// metrics are not read (issue 26): the pool rules (pool_queue_skew,
// one_worker) compare the engines' gauges and speak wherever llmtop reads
// two or more of a router's workers; behind a router whose workers llmtop
// does not read, its per-worker counts (the production-stack router's
// vllm:current_qps and vllm:num_requests_running per server, vllm-router's
// and the SGLang gateway's requests in flight per worker) and its own load
// range (vllm-router's vllm_router_max_load / _min_load, set when its
// cache-aware policy acts on an imbalance) are what there is.
func init() {
	register(rule{id: "router_load_skew", checks: "each router spreads its requests across its workers (by its own counts, where the engines are not read)",
		needs: needRouter, hold: holdRoute, eval: ruleRouterLoadSkew})
}

// engineReadBehind reports whether llmtop reads two or more of a router's
// workers itself (then the pool rules judge the spread from the engines'
// own gauges, which lead the router's by seconds).
func (e *env) engineReadBehind(r Endpoint) bool {
	n := 0
	for _, b := range r.Identity.Backends {
		if ep, ok := e.watchedAt(b.Server); ok && e.settled(&ep) {
			n++
		}
	}
	return n >= 2
}

// inRotation are a router's backends it has not taken out.
func inRotation(r Endpoint) []model.Backend {
	var out []model.Backend
	for _, b := range r.Identity.Backends {
		if ejected(b) == "" {
			out = append(out, b)
		}
	}
	return out
}

// loadRangeNow is the router's own load range where it acted on it within
// the router window (nil otherwise: the gauges hold the last range it
// acted on, however old).
func (e *env) loadRangeNow(r Endpoint) *model.LoadRange {
	lr := r.Identity.LoadRange
	if lr == nil || lr.ActedAt.IsZero() || e.now().Sub(lr.ActedAt) > e.cfg.RouteRouterWindow {
		return nil
	}
	return lr
}

func ruleRouterLoadSkew(e *env) []Finding {
	var out []Finding
	for _, r := range e.routers() {
		if !e.routerFresh(r) || e.engineReadBehind(r) {
			continue
		}
		bs := inRotation(r)
		lever := engines.RouteBalanceOf(engines.LayerByWhat(r.Identity.Layer))
		lr := e.loadRangeNow(r)
		if f, ok := e.routerOneWorker(r, bs, lever); ok {
			out = append(out, f)
		} else if f, ok := e.routerSkew(r, bs, lr, lever); ok {
			out = append(out, f)
		}
	}
	return out
}

// routerOneWorker: the router sends RouteOneShare of its requests to one
// worker, by its own rate per worker (RouteMinRPS in all) or, where it
// counts no rate, by its requests in flight (RouteQueueMin in all).
func (e *env) routerOneWorker(r Endpoint, bs []model.Backend, lever string) (Finding, bool) {
	if len(bs) < 2 {
		return Finding{}, false
	}
	val := func(b model.Backend) (float64, bool) { return b.QPS, b.QPSOK }
	what, unit, least := "sent", "req/s", e.cfg.RouteMinRPS
	if _, ok := val(bs[0]); !ok {
		val = func(b model.Backend) (float64, bool) { return b.Running, b.RunningOK }
		what, unit, least = "in flight", "requests", e.cfg.RouteQueueMin
	}
	var total float64
	top := bs[0]
	for _, b := range bs {
		v, ok := val(b)
		if !ok {
			return Finding{}, false
		}
		total += v
		if tv, _ := val(top); v > tv {
			top = b
		}
	}
	tv, _ := val(top)
	if total < least || tv/total < e.cfg.RouteOneShare {
		return Finding{}, false
	}
	var ev []Evidence
	for _, b := range bs {
		v, _ := val(b)
		ev = append(ev, Evidence{Text: fmt.Sprintf("router %s: %s %s %s to %s", r.URL, num(v), unit, what, b.Server), Source: b.From})
	}
	ev = append(ev, notRead())
	return Finding{Endpoint: r.URL, Category: Routing, Severity: model.SevWarn,
		Title: fmt.Sprintf("%s of the requests router %s has %s go to one of its %d workers (%s of %s %s, by its count)", pct(tv/total), r.URL, what,
			len(bs), num(tv), num(total), unit),
		Evidence: ev,
		Cause: "the router's load signal reads the same for every worker, so its tie-break picks the first every time " +
			"(a gRPC path whose load counters stay at 0), or a session or hash key is the same for every request",
		Actions: []Action{{Change: "read " + engines.RouteLoadSignal, Why: "a balanced pool needs a load signal that moves", TradeOff: "none"},
			{Change: lever, Why: "load then counts", TradeOff: "fewer prefix-cache hits"}, watchEngines()}}, true
}

// routerSkew: the router's requests in flight per worker spread (the
// busiest RouteQueueMin or more, the least a quarter of it or less,
// coefficient of variation RouteQueueCV), or its own load range, acted on
// within the window, spread as far.
func (e *env) routerSkew(r Endpoint, bs []model.Backend, lr *model.LoadRange, lever string) (Finding, bool) {
	var xs []float64
	sorted := make([]model.Backend, 0, len(bs))
	for _, b := range bs {
		if b.RunningOK {
			xs = append(xs, b.Running)
			sorted = append(sorted, b)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Running > sorted[j].Running })
	counted := len(sorted) >= 2 && len(sorted) == len(bs)
	var c float64
	skew := false
	if counted {
		hi, lo := sorted[0].Running, sorted[len(sorted)-1].Running
		c = cv(xs)
		skew = hi >= e.cfg.RouteQueueMin && c >= e.cfg.RouteQueueCV && lo <= hi/4
	}
	ranged := lr != nil && lr.Max >= e.cfg.RouteQueueMin && lr.Min <= lr.Max/4
	if !skew && !ranged {
		return Finding{}, false
	}
	var ev []Evidence
	title := ""
	if skew {
		qs := make([]string, len(sorted))
		for i, b := range sorted {
			qs[i] = num(b.Running)
		}
		title = fmt.Sprintf("load skewed across the %d workers of router %s: in flight %s (by its count)", len(sorted), r.URL, strings.Join(qs, " / "))
		ev = append(ev, Evidence{Text: fmt.Sprintf("coefficient of variation of the router's in-flight counts %.2f (at %.2f it is skew)", c, e.cfg.RouteQueueCV), Source: sorted[0].From})
		for _, b := range sorted {
			ev = append(ev, Evidence{Text: fmt.Sprintf("router %s: %s in flight to %s", r.URL, num(b.Running), b.Server), Source: b.From})
		}
	} else {
		within := e.cfg.RouteRouterWindow
		if lr.EventsWindow > 0 {
			within = lr.EventsWindow
		}
		title = fmt.Sprintf("load skewed across the workers of router %s: its own range %s to %s in flight, acted on within %s", r.URL, num(lr.Max), num(lr.Min), within)
	}
	if lr != nil {
		acts := fmt.Sprintf("%s such acts since it started, the last within %s", num(lr.Events), e.cfg.RouteRouterWindow)
		if lr.EventsWindow > 0 {
			acts = fmt.Sprintf("%s such acts in the last %s", num(lr.Events), lr.EventsWindow)
		}
		ev = append(ev, Evidence{Text: fmt.Sprintf("the router found its workers' load imbalanced and sent requests to the least loaded: its range max %s, min %s (%s)",
			num(lr.Max), num(lr.Min), acts), Source: lr.From})
	}
	ev = append(ev, notRead())
	return Finding{Endpoint: r.URL, Category: Routing, Severity: model.SevWarn, Title: title, Evidence: ev,
		Cause: "the router keeps sending to workers that already hold the most requests: a cache- or session-affine policy whose " +
			"balance thresholds are above this spread, or a load signal the engines report late",
		Actions: []Action{{Change: lever, Why: "past a smaller gap the router sends to the least loaded worker", TradeOff: "fewer prefix-cache hits"},
			watchEngines()}}, true
}

// notRead is the evidence that the engines' own gauges are not read.
func notRead() Evidence {
	return Evidence{Text: "llmtop reads fewer than two of these workers' own metrics: the spread is the router's count, not the engines' queues"}
}

// watchEngines is the action that lets the pool rules judge the engines.
func watchEngines() Action {
	return Action{Change: "watch the workers' own metrics endpoints beside the router (or the Prometheus that scrapes them)",
		Why: "their own queues and KV say whether the spread costs waiting", TradeOff: "none"}
}
