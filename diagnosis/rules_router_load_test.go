package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// vllmRouter is a Rust vllm-router endpoint with its word on each worker
// and, when lr is set, its own load range.
func vllmRouter(lr *model.LoadRange, bs ...model.Backend) Endpoint {
	r := prodRouter(bs...)
	r.URL, r.Scrape.Endpoint = "http://vr:29000", "http://vr:29000"
	r.Identity.Layer = engines.VLLMRouter.What()
	r.Identity.LoadRange = lr
	return r
}

func inFlight(server string, running float64) model.Backend {
	return model.Backend{Server: server, Healthy: 1, HealthyOK: true, Breaker: "closed", Running: running, RunningOK: true,
		From: "vllm_router_worker_health, vllm_router_running_requests, vllm_router_cb_state"}
}

// vllm-router in front of three workers llmtop does not read: by its own
// count 30 / 8 / 2 in flight, and its own range (acted on just now) 30 to 1.
// The skew opens after the routing hold, naming the router's counts, its
// range and its balance flags.
func TestRouterLoadSkewFromItsCounts(t *testing.T) {
	first, rep := watch(t, time.Minute, func(s int) []Endpoint {
		lr := &model.LoadRange{Max: 30, Min: 1, Events: float64(100 + s), EventsOK: true, ActedAt: t0.Add(time.Duration(s) * time.Second),
			From: "vllm_router_max_load, vllm_router_min_load, vllm_router_load_balancing_events_total"}
		return []Endpoint{vllmRouter(lr, inFlight("http://w1:8000", 30), inFlight("http://w2:8000", 8), inFlight("http://w3:8000", 2))}
	})
	f := open(rep, "router_load_skew")
	if f == nil {
		t.Fatalf("not open: %v", ids(rep.Findings))
	}
	if s := first["router_load_skew"]; s < 20 || s > 30 {
		t.Errorf("opened at %d s", s)
	}
	if f.Title != "load skewed across the 3 workers of router http://vr:29000: in flight 30 / 8 / 2 (by its count)" ||
		!hasEvidence(f, "its range max 30, min 1 (160 such acts") || !hasEvidence(f, "fewer than two of these workers' own metrics") ||
		!hasAction(f, "vllm-router --balance-abs-threshold (default 64)") {
		t.Errorf("%q %+v %+v", f.Title, f.Evidence, f.Actions)
	}
}

// The router's range alone, where it counts nothing per worker: read only
// while it acts on it. A range it acted on minutes ago is its last word,
// not now's: nothing.
func TestRouterLoadSkewFromItsRange(t *testing.T) {
	health := func(s string) model.Backend {
		return model.Backend{Server: s, Healthy: 1, HealthyOK: true, From: "vllm_router_worker_health"}
	}
	for _, acted := range []time.Duration{0, -5 * time.Minute} {
		_, rep := watch(t, time.Minute, func(s int) []Endpoint {
			now := t0.Add(time.Duration(s) * time.Second)
			lr := &model.LoadRange{Max: 80, Min: 3, Events: 9, EventsOK: true, ActedAt: now.Add(acted), From: "vllm_router_max_load, vllm_router_min_load"}
			return []Endpoint{vllmRouter(lr, health("http://w1:8000"), health("http://w2:8000"))}
		})
		f := open(rep, "router_load_skew")
		if acted == 0 && (f == nil || !strings.Contains(f.Title, "its own range 80 to 3 in flight")) {
			t.Errorf("acting now: %+v", f)
		}
		if acted != 0 && f != nil {
			t.Errorf("a range acted on 5 minutes ago read as now's: %q", f.Title)
		}
	}
}

// The production-stack router sends 97 % of its requests to one server
// (its own vllm:current_qps), engines not read: the one-worker shape.
func TestRouterOneWorkerFromItsRate(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{prodRouter(backend("http://10.0.0.11:8000", 1, 4.0, 9), backend("http://10.0.0.12:8000", 1, 0.1, 0))}
	})
	f := open(rep, "router_load_skew")
	if f == nil || !strings.HasPrefix(f.Title, "98 % of the requests router http://router:30080 has sent go to one of its 2 workers (4 of 4.1 req/s") ||
		!hasEvidence(f, "0.1 req/s sent to http://10.0.0.12:8000") {
		t.Fatalf("%+v", f)
	}
}

// No finding where the engines are read (the pool rules judge them, and
// the router's counts lag theirs), where the load is even, or where the
// router took the idle worker out (router_ejected_worker's).
func TestRouterLoadSkewNot(t *testing.T) {
	cases := map[string]func(int) []Endpoint{
		"engines read": func(int) []Endpoint {
			return []Endpoint{vllmRouter(nil, inFlight("http://w1:8000", 30), inFlight("http://w2:8000", 2), inFlight("http://w3:8000", 1)),
				member("http://w1:8000", "", 30, 0, 0.5), member("http://w2:8000", "", 2, 0, 0.1)}
		},
		"even": func(int) []Endpoint {
			return []Endpoint{vllmRouter(nil, inFlight("http://w1:8000", 12), inFlight("http://w2:8000", 10), inFlight("http://w3:8000", 11))}
		},
		"ejected": func(int) []Endpoint {
			out := inFlight("http://w3:8000", 0)
			out.Breaker = "open"
			return []Endpoint{vllmRouter(nil, inFlight("http://w1:8000", 12), inFlight("http://w2:8000", 10), out)}
		},
	}
	for name, at := range cases {
		if _, rep := watch(t, time.Minute, at); open(rep, "router_load_skew") != nil {
			t.Errorf("%s: %q", name, open(rep, "router_load_skew").Title)
		}
	}
}
