package diagnosis

import (
	"fmt"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Router overhead against engine time (issue 26, Build 2): a router or
// proxy that reports its own added latency per request (Dynamo's KV
// router, LiteLLM) and the time to first token it reports beside it; when
// the router's part of the user's TTFT is large, the time is the router's,
// not the engines'. A layer that reports none is "not checked", never a
// zero.
func init() {
	register(rule{id: "router_overhead", checks: "no router or proxy adds a large share of the time to first token",
		needs: needLayer, hold: holdRoute, eval: ruleRouterOverhead})
}

// layers are the watched endpoints that are a router, gateway or proxy.
func (e *env) layers() []Endpoint {
	return e.subset(&e.layersIn, func(ep *Endpoint) bool { return ep.Identity.Overhead != nil })
}

// ruleRouterOverhead: a fresh router's own overhead is RouteOverheadShare
// or more of the user's time to first token and RouteOverheadMin or more
// per request, both over the same window of its requests.
func ruleRouterOverhead(e *env) []Finding {
	var out []Finding
	for _, r := range e.layers() {
		o := r.Identity.Overhead
		switch {
		case !e.routerFresh(r):
			e.lack(&r, "router overhead not checked: the router's last word is older than route_lag")
			continue
		case o.Missing != "":
			e.lack(&r, "router overhead not checked: "+o.Missing)
			continue
		case o.Requests <= 0:
			e.lack(&r, fmt.Sprintf("router overhead not checked: %s counted no request %s", o.Metric, overheadSpan(o)))
			continue
		}
		share, ttft, ok := o.Share()
		if !ok {
			why := o.TTFTMetric + " counted no request " + overheadSpan(o)
			if l := overheadOf(o.Metric); l != nil && l.TTFTNote != "" {
				why += " (" + l.TTFTNote + ")"
			}
			e.lack(&r, "router overhead against TTFT not checked: "+why)
			continue
		}
		if share < e.cfg.RouteOverheadShare || o.Mean < e.cfg.RouteOverheadMin.Seconds() {
			continue
		}
		ev := []Evidence{
			{Text: fmt.Sprintf("router %s: its own overhead %s per request %s, over %s requests", r.URL, secs(o.Mean), overheadSpan(o), num(o.Requests)), Source: o.Metric},
			{Text: ttftEvidence(o, ttft), Source: o.TTFTMetric},
			{Text: fmt.Sprintf("so %s of the time to first token is the router's", pct(share)), Source: o.Metric + " ÷ " + o.TTFTMetric},
		}
		if eng := enginesTTFT(e); eng != "" {
			ev = append(ev, Evidence{Text: "the engines' own TTFT p50 " + eng, Source: "each engine's TTFT histogram, over the window"})
		}
		var acts []Action
		var levers []string
		if l := overheadOf(o.Metric); l != nil {
			levers = l.Levers
		}
		for i, l := range levers {
			a := Action{Change: l, Why: "the router's time is added to every request's first token, however fast the engines are"}
			if i == 0 {
				a.TradeOff = "more router processes to run and keep in step"
			} else {
				a.TradeOff = "what the router's logic buys (cache-aware placement, budgets, logging) may be worth its time: measure both"
			}
			acts = append(acts, a)
		}
		out = append(out, Finding{Endpoint: r.URL, Category: Routing, Severity: model.SevWarn,
			Title:    fmt.Sprintf("router overhead: %s per request, %s of the time to first token", secs(o.Mean), pct(share)),
			Evidence: ev,
			Cause: "the router (or proxy) spends a large part of each request's time to first token on its own work " +
				"(routing decisions, hashing, logging, callbacks) before or after the engine's: the engines are not where that time goes",
			Actions: acts})
	}
	return out
}

// overheadSpan says what the means are over.
func overheadSpan(o *model.RouterOverhead) string {
	if o.Window > 0 {
		return "in the last " + o.Window.Round(time.Second).String()
	}
	return "since the router started"
}

// ttftEvidence says which time to first token the overhead is set against.
func ttftEvidence(o *model.RouterOverhead, user float64) string {
	if o.TTFTIncludes {
		return fmt.Sprintf("its end-to-end time to first token %s (which includes it) %s, over %s requests", secs(o.TTFTMean), overheadSpan(o), num(o.TTFTRequests))
	}
	return fmt.Sprintf("its backends' time to first token %s (without it) %s, over %s requests: %s with it", secs(o.TTFTMean), overheadSpan(o), num(o.TTFTRequests), secs(user))
}

// overheadOf is how the layer whose overhead histogram is metric reports
// it (engines/: each layer's Overhead), nil when none does.
func overheadOf(metric string) *engines.Overhead {
	for _, l := range engines.Layers() {
		if l.Overhead != nil && l.Overhead.Name == metric {
			return l.Overhead
		}
	}
	return nil
}

// enginesTTFT is the span of the watched engines' TTFT p50 ("" when none
// has one).
func enginesTTFT(e *env) string {
	lo, hi, n := 0.0, 0.0, 0
	for ep := range each(e.withMetrics()) {
		if ep.Identity.Layer != "" {
			continue
		}
		d, ok := ep.State.Latency[model.TTFT]
		if !ok || !d.P50.OK {
			continue
		}
		if n == 0 || d.P50.V < lo {
			lo = d.P50.V
		}
		if n == 0 || d.P50.V > hi {
			hi = d.P50.V
		}
		n++
	}
	switch {
	case n == 0:
		return ""
	case lo == hi:
		return fmt.Sprintf("%s (%d engine)", secs(lo), n)
	}
	return fmt.Sprintf("%s–%s (%d engines)", secs(lo), secs(hi), n)
}
