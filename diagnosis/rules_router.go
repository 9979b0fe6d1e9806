package diagnosis

import (
	"fmt"
	neturl "net/url"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The router's own word on its backends (issue 26, Build 4): a router
// that still sends requests to a backend it counts unhealthy, or to one
// llmtop cannot reach. Read from the router's per-server gauges
// (model.Identity.Backends) and only from a router read within RouteLag.
func init() {
	register(rule{id: "dead_backend_traffic", checks: "no router sends traffic to a dead or tripped backend",
		needs: needRouter, hold: holdRouterWindow, eval: ruleDeadBackendTraffic},
		rule{id: "router_bottleneck", checks: "no router holds requests in its own queue while the engines have room",
			needs: needRouter, hold: holdRoute, eval: ruleRouterBottleneck})
}

// holdRouterWindow: the router's rate is a sliding window, and its health
// and engines' gauges lag each other; the finding outlasts both.
func holdRouterWindow(c Config) time.Duration { return max(holdRoute(c), c.RouteRouterWindow) }

// routers are the endpoints whose layer reports its backends.
func (e *env) routers() []Endpoint {
	return e.subset(&e.routersIn, func(ep *Endpoint) bool {
		return len(ep.Identity.Backends) > 0 || len(ep.Identity.RouterQueue) > 0
	})
}

// hostPort is a URL's host and port, lowercased ("" when it has none):
// the router names an engine by its own URL, llmtop by the one it was
// given, and only host and port can match.
func hostPort(raw string) string {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := neturl.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	h := strings.ToLower(u.Host)
	if u.Port() == "" {
		switch u.Scheme {
		case "https":
			h += ":443"
		default:
			h += ":80"
		}
	}
	return h
}

// watchedAt is the endpoint llmtop watches at a router's server URL.
func (e *env) watchedAt(server string) (Endpoint, bool) {
	e.cross()
	hp := hostPort(server)
	if hp == "" {
		return Endpoint{}, false
	}
	for ep := range each(e.all) {
		if ep.Identity.Layer == "" && hostPort(ep.URL) == hp {
			return *ep, true
		}
	}
	return Endpoint{}, false
}

// backendTraffic is the router's evidence that it still sends a backend
// requests: its count in flight there, or its rate to it.
func backendTraffic(c Config, b model.Backend) (string, bool) {
	var parts []string
	if b.RunningOK && b.Running > 0 {
		parts = append(parts, fmt.Sprintf("%s requests in flight there by its count", num(b.Running)))
	}
	if b.QPSOK && b.QPS >= c.RouteDeadQPS {
		parts = append(parts, fmt.Sprintf("%s req/s sent there (%s)", num(b.QPS), engines.ProdStackQPS))
	}
	return strings.Join(parts, ", "), len(parts) > 0
}

// ruleDeadBackendTraffic: a router still sends traffic to a backend it
// marks unhealthy (tripped), or to one llmtop has not reached for longer
// than RouteLag (dead) while the router still counts it healthy.
func ruleDeadBackendTraffic(e *env) []Finding {
	var out []Finding
	now := e.now()
	for _, r := range e.routers() {
		if !e.routerFresh(r) {
			continue
		}
		for _, b := range r.Identity.Backends {
			traffic, ok := backendTraffic(e.cfg, b)
			if !ok {
				continue
			}
			ev := []Evidence{{Text: "router " + r.URL + ": " + traffic, Source: b.From}}
			var title, cause string
			switch ep, watched := e.watchedAt(b.Server); {
			case b.Breaker == "open":
				title = "router sends traffic to a backend whose circuit breaker is open: " + b.Server
				ev = append(ev, Evidence{Text: fmt.Sprintf("the router's circuit breaker for %s is open", b.Server), Source: b.From})
				cause = "the router tripped the backend's breaker (its requests failed) yet still has requests on it: they fail or wait"
			case b.HealthyOK && b.Healthy < 1:
				title = "router sends traffic to a backend it counts unhealthy: " + b.Server
				ev = append(ev, Evidence{Text: fmt.Sprintf("the router's health gauge for %s reads %s", b.Server, num(b.Healthy)), Source: b.From})
				cause = "the router marks the backend unhealthy yet keeps requests on it: requests sent there wait, time out or fail " +
					"while the healthy backends have room (a session or prefix affinity that outlives health, or a health check that does not take it out)"
			case watched && ep.isDown() && !ep.LastOK.IsZero() && now.Sub(ep.LastOK) > e.cfg.RouteLag:
				down := now.Sub(ep.LastOK).Round(time.Second)
				title = fmt.Sprintf("router still sends traffic to %s, unreachable for %s", b.Server, down)
				ev = append(ev, Evidence{Text: fmt.Sprintf("%s: last read %s ago (%s)", ep.URL, down, ep.Scrape.Err)})
				if b.HealthyOK {
					ev = append(ev, Evidence{Text: fmt.Sprintf("the router's health gauge for %s reads %s: it counts it healthy", b.Server, num(b.Healthy)), Source: b.From})
				}
				cause = "the backend is down but the router has not taken it out: its requests fail or hang until the router's health check notices"
			default:
				continue
			}
			out = append(out, Finding{Endpoint: r.URL, Category: Routing, Severity: model.SevCrit, Title: title, Evidence: ev, Cause: cause,
				Actions: []Action{{Change: "take " + b.Server + " out of " + engines.RouteDeadBackend,
					Why: "requests the router sends there are lost while the other backends could serve them", TradeOff: "less capacity until it is back"}}})
		}
	}
	return out
}

// routerFresh reports whether a router's word is now's: read within
// RouteLag and not down (a router down keeps its last word).
func (e *env) routerFresh(r Endpoint) bool {
	return !r.isDown() && !r.Scrape.Time.IsZero() && e.now().Sub(r.Scrape.Time) <= e.cfg.RouteLag
}

// queueRole is the engines' role a router queue's worker type names (""
// for every engine).
func queueRole(workerType string) model.PDRole {
	switch workerType {
	case "prefill":
		return model.RolePrefill
	case "decode":
		return model.RoleDecode
	}
	return ""
}

// ruleRouterBottleneck: the router holds RouteRouterQueueMin or more
// requests in its own queue while every settled engine of that worker type
// llmtop watches has an empty queue and KV below RouteFullKV: the router,
// not the engines, is where requests wait. Dynamo's router holds requests
// by design past its --router-queue-threshold, so pending with empty
// engine queues is its threshold set below what the engines take.
func ruleRouterBottleneck(e *env) []Finding {
	var out []Finding
	for _, r := range e.routers() {
		if !e.routerFresh(r) {
			continue
		}
		for _, q := range r.Identity.RouterQueue {
			if q.Pending < e.cfg.RouteRouterQueueMin {
				continue
			}
			want := queueRole(q.WorkerType)
			var engs []Endpoint
			for ep := range each(e.withMetrics()) {
				if ep.Identity.Layer == "" && (want == "" || ep.Identity.Role == "" || ep.Identity.Role == want) && e.settled(ep) {
					engs = append(engs, *ep)
				}
			}
			kind := "engines"
			if q.WorkerType != "" {
				kind = q.WorkerType + " engines"
			}
			if len(engs) == 0 {
				e.lack(&r, fmt.Sprintf("the router holds %s requests, but no %s behind it are watched: whether they have room is not checked", num(q.Pending), kind))
				continue
			}
			room := true
			var ev []Evidence
			ev = append(ev, Evidence{Text: fmt.Sprintf("router %s holds %s %s requests in its own queue", r.URL, num(q.Pending), q.WorkerType), Source: engines.DynamoRouterPending})
			for _, ep := range engs {
				w, kv := ep.State.Waiting, ep.State.KVUsage
				if !w.OK || w.V > 0 || (kv.OK && kv.V >= e.cfg.RouteFullKV) {
					room = false
					break
				}
				line := fmt.Sprintf("%s: 0 waiting, %s running", ep.URL, num(ep.State.Running.V))
				if kv.OK {
					line += fmt.Sprintf(", KV %s", pct(kv.V))
				}
				ev = append(ev, Evidence{Text: line})
			}
			if !room {
				continue
			}
			out = append(out, Finding{Endpoint: r.URL, Category: Routing, Severity: model.SevWarn,
				Title:    fmt.Sprintf("router bottleneck: %s requests wait in the router while the %d %s it sends to have room", num(q.Pending), len(engs), kind),
				Evidence: ev,
				Cause: "the router holds requests back (its queue threshold reads the workers as busy) while their own queues are empty and their KV has room: " +
					"time to first token is spent waiting in the router, not in the engines",
				Actions: []Action{{Change: "raise " + engines.RouteQueueThreshold,
					Why: "the engines take more than the router lets through", TradeOff: "a higher threshold moves the waiting into the engines' queues, where priority and fairness are the engines'"}}})
		}
	}
	return out
}
