package diagnosis

import (
	"fmt"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// A router that took a worker out of its rotation (its circuit breaker
// open or half-open, its health gauge at 0) while the worker still serves
// by its own metrics, or while the router's other workers queue: capacity
// paid for and idle, by the router's word (issue 26). The SGLang gateway
// and vllm-router serve both gauges per worker (smg_worker_cb_state,
// smg_worker_health; vllm_router_cb_state, vllm_router_worker_health).
func init() {
	register(rule{id: "router_ejected_worker", checks: "no router keeps a worker that still serves out of its rotation",
		needs: needRouter, hold: holdRouterWindow, eval: ruleRouterEjectedWorker})
}

// ejected says how a router has taken a backend out ("" when it has not):
// its breaker open or half-open, or its health gauge below 1.
func ejected(b model.Backend) string {
	var how string
	switch b.Breaker {
	case "open", "half-open":
		how = "its circuit breaker for it is " + b.Breaker
		if b.FailuresOK && b.Failures > 0 {
			how += fmt.Sprintf(" after %s consecutive failures", num(b.Failures))
		}
	}
	if b.HealthyOK && b.Healthy < 1 {
		if how != "" {
			how += " and "
		}
		how += fmt.Sprintf("its health gauge for it reads %s", num(b.Healthy))
	}
	return how
}

// ejectedBy reports whether a fresh router has taken the engine at u out
// (pool_starved leaves such an idle worker to this rule).
func (e *env) ejectedBy(u string) bool {
	hp := hostPort(u)
	for _, r := range e.routers() {
		if !e.routerFresh(r) {
			continue
		}
		for _, b := range r.Identity.Backends {
			if hostPort(b.Server) == hp && ejected(b) != "" {
				if _, traffic := backendTraffic(e.cfg, b); !traffic {
					return true
				}
			}
		}
	}
	return false
}

// queueing: a worker with requests waiting or its KV full.
func (e *env) queueing(ep Endpoint) bool {
	return ep.State.Waiting.Or(0) >= 1 || (ep.State.KVUsage.OK && ep.State.KVUsage.V >= e.cfg.RouteFullKV)
}

func ruleRouterEjectedWorker(e *env) []Finding {
	var out []Finding
	for _, r := range e.routers() {
		if !e.routerFresh(r) {
			continue
		}
		lever := "the router's circuit-breaker and health-check settings"
		if ly := engines.LayerByWhat(r.Identity.Layer); ly != nil && ly.Workers != nil && ly.Workers.EjectLever != "" {
			lever = ly.Workers.EjectLever
		}
		for _, b := range r.Identity.Backends {
			how := ejected(b)
			if how == "" {
				continue
			}
			if _, traffic := backendTraffic(e.cfg, b); traffic {
				continue // dead_backend_traffic: it still sends there
			}
			w, watched := e.watchedAt(b.Server)
			alive := watched && !w.isDown() && e.settled(&w)
			if watched && !alive {
				continue // llmtop cannot read it now either: the router may be right
			}
			// The router's other workers, as their own metrics say.
			var others []Endpoint
			all := true
			for _, o := range r.Identity.Backends {
				if o.Server == b.Server || ejected(o) != "" {
					continue
				}
				if oep, ok := e.watchedAt(o.Server); ok && e.settled(&oep) {
					others = append(others, oep)
					all = all && e.queueing(oep)
				}
			}
			saturated := len(others) > 0 && all
			if !alive && !saturated {
				if !watched {
					e.lack(&r, fmt.Sprintf("the router took %s out (%s), but llmtop does not watch it: whether it still serves is not checked", b.Server, how))
				}
				continue
			}
			traffic := "no requests in flight there by its count"
			if !b.RunningOK {
				traffic = "it serves no count of requests there"
			}
			ev := []Evidence{{Text: fmt.Sprintf("router %s: %s; %s", r.URL, how, traffic), Source: b.From}}
			var title, cause string
			sev := model.SevWarn
			switch {
			case alive:
				ev = append(ev, Evidence{Text: fmt.Sprintf("%s answers llmtop: %s (its own metrics, read %s ago)", b.Server, memberLine(w),
					e.now().Sub(w.LastOK).Round(time.Second)), Source: "the worker's own metrics"})
				title = fmt.Sprintf("router took %s out of its rotation though it still serves", b.Server)
				cause = "the router counted failures the worker has since come back from (timeouts of long requests, errors or resets under load, " +
					"a restart), or its health check times out while the worker is busy: the worker answers and has room, and gets no new requests " +
					"until the breaker's timeout passes and a trial request succeeds"
			default:
				ev = append(ev, Evidence{Text: fmt.Sprintf("%s is not watched by llmtop: whether it still serves is not checked", b.Server)})
				title = fmt.Sprintf("router took %s out of its rotation while its other %d workers queue", b.Server, len(others))
				cause = "the router sends every request to the workers it still counts healthy, and they queue: whether the one taken out could " +
					"serve is not read (add its own metrics endpoint to see)"
			}
			if saturated {
				sev = model.SevCrit
				if alive {
					title += fmt.Sprintf(", while its other %d workers queue", len(others))
				}
				cause += "; the requests it would take wait on the others"
				for _, o := range others {
					ev = append(ev, Evidence{Text: memberLine(o), Source: "running/waiting/KV of each member"})
				}
			}
			out = append(out, Finding{Endpoint: r.URL, Category: Routing, Severity: sev, Title: title, Evidence: ev, Cause: cause,
				Actions: []Action{
					{Change: "let the router take a worker back sooner, or trip it later: " + lever,
						Why:      "the router's breaker or health check is stricter than the worker's real failures",
						TradeOff: "a worker that really fails keeps getting requests a little longer, and more of them fail first"},
					{Change: "read the router's log and the worker's for the failures at the time it was taken out",
						Why: "a breaker opens on errors the router saw: a timeout, a reset, an overload", TradeOff: "none"},
				}})
		}
	}
	return out
}
