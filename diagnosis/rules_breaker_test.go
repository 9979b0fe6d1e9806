package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// gateway is an SGLang model gateway endpoint as the engine source leaves
// it: a layer, with its word on each worker.
func gateway(bs ...model.Backend) Endpoint {
	r := prodRouter(bs...)
	r.URL, r.Scrape.Endpoint = "http://gw:29000", "http://gw:29000"
	r.Identity.Layer = engines.ModelGateway.What()
	return r
}

// smgWorker is the gateway's word on one worker: health, breaker, its
// consecutive failures and the requests in flight there (the values of
// testdata/routers/smg-gateway-workers.txt).
func smgWorker(server string, healthy float64, breaker string, failures, running float64) model.Backend {
	return model.Backend{Server: server, Healthy: healthy, HealthyOK: true, Breaker: breaker, Failures: failures, FailuresOK: true,
		Running: running, RunningOK: true, From: "smg_worker_health, smg_worker_requests_active, smg_worker_cb_state, smg_worker_cb_consecutive_failures"}
}

// The gateway opened w3's breaker after 10 failures and sends it nothing;
// w3 answers llmtop with room while w1 and w2 queue. Critical after the
// router window, naming the worker, the failures, the others' queues and
// the gateway's own flags; pool_starved leaves the idle w3 to it.
func TestRouterEjectedServingWorker(t *testing.T) {
	first, rep := watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{
			gateway(smgWorker("http://10.0.0.11:30000", 1, "closed", 0, 14), smgWorker("http://10.0.0.12:30000", 1, "closed", 0, 13),
				smgWorker("http://10.0.0.13:30000", 1, "open", 10, 0)),
			member("http://10.0.0.11:30000", "", 14, 6, 0.95), member("http://10.0.0.12:30000", "", 13, 5, 0.93),
			member("http://10.0.0.13:30000", "", 0, 0, 0.02),
		}
	})
	f := open(rep, "router_ejected_worker")
	if f == nil {
		t.Fatalf("not open; findings %v", ids(rep.Findings))
	}
	if s := first["router_ejected_worker"]; s < 30 || s > 45 {
		t.Errorf("opened at %d s, want after the 30 s router window, by 45 s", s)
	}
	if f.Severity != model.SevCrit || f.Title != "router took http://10.0.0.13:30000 out of its rotation though it still serves, while its other 2 workers queue" {
		t.Errorf("%s %q", f.Severity, f.Title)
	}
	for _, s := range []string{"circuit breaker for it is open after 10 consecutive failures", "http://10.0.0.13:30000 answers llmtop: http://10.0.0.13:30000: running 0, waiting 0, KV 2",
		"http://10.0.0.11:30000: running 14, waiting 6, KV 95"} {
		if !hasEvidence(f, s) {
			t.Errorf("no evidence %q in %+v", s, f.Evidence)
		}
	}
	if !hasAction(f, "--cb-failure-threshold") || !hasAction(f, "--health-failure-threshold") || !hasAction(f, "SGLang gateway") {
		t.Errorf("actions %+v", f.Actions)
	}
	if open(rep, "pool_starved") != nil {
		t.Error("pool_starved says it twice")
	}
}

// Taken out and idle while the others have room: a warning (capacity
// idle, nobody waits). Its health gauge at 0 says it as well as a breaker.
func TestRouterEjectedServingWorkerOthersHaveRoom(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{
			gateway(smgWorker("http://w1:30000", 1, "closed", 0, 4), smgWorker("http://w2:30000", 0, "closed", 0, 0)),
			member("http://w1:30000", "", 4, 0, 0.3), member("http://w2:30000", "", 0, 0, 0.01),
		}
	})
	f := open(rep, "router_ejected_worker")
	if f == nil || f.Severity != model.SevWarn || !strings.HasSuffix(f.Title, "though it still serves") || !hasEvidence(f, "health gauge for it reads 0") {
		t.Fatalf("finding %+v", f)
	}
}

// No finding where the router is right or has not acted: the worker is
// down for llmtop too; the breaker is closed; the breaker is open but the
// router still has requests there (dead_backend_traffic's); a worker
// llmtop does not watch while the others have room (not checked, said).
func TestRouterEjectedWorkerNot(t *testing.T) {
	cases := map[string]func(s int) []Endpoint{
		"down": func(int) []Endpoint {
			w := member("http://w2:30000", "", 0, 0, 0)
			w.Scrape.ErrKind = model.ErrRefused
			return []Endpoint{gateway(smgWorker("http://w1:30000", 1, "closed", 0, 9), smgWorker("http://w2:30000", 1, "open", 10, 0)),
				member("http://w1:30000", "", 9, 3, 0.95), w}
		},
		"closed": func(int) []Endpoint {
			return []Endpoint{gateway(smgWorker("http://w1:30000", 1, "closed", 0, 9), smgWorker("http://w2:30000", 1, "closed", 2, 0)),
				member("http://w1:30000", "", 9, 0, 0.5), member("http://w2:30000", "", 0, 0, 0)}
		},
		"traffic": func(int) []Endpoint {
			return []Endpoint{gateway(smgWorker("http://w1:30000", 1, "closed", 0, 9), smgWorker("http://w2:30000", 1, "open", 10, 3)),
				member("http://w1:30000", "", 9, 0, 0.5), member("http://w2:30000", "", 3, 0, 0.1)}
		},
		"unwatched": func(int) []Endpoint {
			return []Endpoint{gateway(smgWorker("http://w1:30000", 1, "closed", 0, 9), smgWorker("http://w2:30000", 1, "open", 10, 0)),
				member("http://w1:30000", "", 9, 0, 0.5), member("http://other:8000", "", 9, 0, 0.5)}
		},
	}
	for name, at := range cases {
		_, rep := watch(t, time.Minute, at)
		if f := open(rep, "router_ejected_worker"); f != nil {
			t.Errorf("%s: %q", name, f.Title)
		}
		if name == "unwatched" && !strings.Contains(strings.Join(rep.Missing, " "), "whether it still serves is not checked") {
			t.Errorf("unwatched: missing %v", rep.Missing)
		}
	}
}

// A worker llmtop does not watch, taken out while the router's other
// workers queue: critical, and says what it could not check.
func TestRouterEjectedUnwatchedWhileOthersQueue(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{gateway(smgWorker("http://w1:30000", 1, "closed", 0, 9), smgWorker("http://w2:30000", 1, "open", 10, 0)),
			member("http://w1:30000", "", 9, 4, 0.97)}
	})
	f := open(rep, "router_ejected_worker")
	if f == nil || f.Severity != model.SevCrit || f.Title != "router took http://w2:30000 out of its rotation while its other 1 workers queue" ||
		!hasEvidence(f, "not watched by llmtop") {
		t.Fatalf("finding %+v", f)
	}
}
