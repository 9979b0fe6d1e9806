package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// prodRouter is a production-stack router endpoint as the engine source
// leaves it: a layer, not an engine (its scrape says so), with its word on
// each backend.
func prodRouter(bs ...model.Backend) Endpoint {
	return ep(func(e *Endpoint) {
		e.URL, e.Scrape.Endpoint = "http://router:30080", "http://router:30080"
		e.Scrape.ErrKind, e.Scrape.Err = model.ErrNotFound, "http://router:30080/metrics is a vLLM production-stack router (router), not an engine"
		e.Identity.Layer = "vLLM production-stack router (router)"
		e.Identity.Backends = bs
		e.State = model.State{}
	})
}

func backend(server string, healthy, qps, running float64) model.Backend {
	return model.Backend{Server: server, Healthy: healthy, HealthyOK: true, QPS: qps, QPSOK: true, Running: running, RunningOK: true,
		From: "vllm:healthy_pods_total, vllm:current_qps, vllm:num_requests_running"}
}

// routerWatch feeds the Diagnoser every 2 s for d; the router is read each
// tick, and an engine is read only while up(s, url) says so (its LastOK
// stays at its last good read, as the poller leaves it).
func routerWatch(t *testing.T, d time.Duration, at func(s int) []Endpoint, up func(s int, u string) bool) (map[string]int, Report) {
	t.Helper()
	dg := NewDiagnoser(DefaultConfig())
	first := map[string]int{}
	last := map[string]time.Time{}
	var rep Report
	for s := 0; s <= int(d/time.Second); s += 2 {
		now := t0.Add(time.Duration(s) * time.Second)
		eps := at(s)
		for i := range eps {
			eps[i].Scrape.Time = now
			if len(eps[i].Identity.Backends) > 0 {
				continue
			}
			if up(s, eps[i].URL) {
				last[eps[i].URL] = now
				eps[i].State.Time = now
			} else {
				eps[i].Scrape.ErrKind, eps[i].Scrape.Err = model.ErrRefused, "connection refused"
			}
			eps[i].LastOK = last[eps[i].URL]
		}
		rep = dg.Update(Input{Time: now, Endpoints: eps})
		for _, f := range rep.Findings {
			if _, ok := first[f.ID]; !ok {
				first[f.ID] = s
			}
		}
	}
	return first, rep
}

// An engine behind the production-stack router dies at 20 s; the router
// keeps counting it healthy and sending it 2 req/s (its health check has
// not noticed). The finding waits out the router/engine lag and the
// router's rate window: not before 60 s, open by 80 s, critical, naming
// the server and the router's own gauges.
func TestDeadBackendStillRouted(t *testing.T) {
	first, rep := routerWatch(t, 90*time.Second, func(s int) []Endpoint {
		return []Endpoint{
			prodRouter(backend("http://10.0.0.11:8000", 1, 2.1, 4), backend("http://10.0.0.12:8000", 1, 2.0, 3)),
			member("http://10.0.0.11:8000", "", 4, 0, 0.4), member("http://10.0.0.12:8000/", "", 3, 0, 0.4),
		}
	}, func(s int, u string) bool { return s < 20 || u == "http://10.0.0.11:8000" })
	s, ok := first["dead_backend_traffic"]
	if !ok || s < 60 || s > 80 {
		t.Fatalf("dead_backend_traffic first at %d (%v), want 60..80 s", s, ok)
	}
	f := open(rep, "dead_backend_traffic")
	if f == nil || f.Severity != model.SevCrit || !strings.Contains(f.Title, "http://10.0.0.12:8000") || strings.Contains(f.Title, "10.0.0.11") {
		t.Fatalf("finding %+v", f)
	}
	if !hasEvidence(f, "counts it healthy") || !hasEvidence(f, "2 req/s") {
		t.Errorf("evidence %+v", f.Evidence)
	}
}

// The router trips a backend (healthy 0) at 10 s; its sliding-window rate
// still reads 1.5 req/s for 20 s after, then 0. That is the window, not
// traffic: no finding. A router that keeps 3 requests on the tripped
// backend for the whole run is one.
func TestTrippedBackendWindowIsNotTraffic(t *testing.T) {
	up := func(int, string) bool { return true }
	first, _ := routerWatch(t, 2*time.Minute, func(s int) []Endpoint {
		b := backend("http://10.0.0.12:8000", 1, 1.5, 2)
		if s >= 10 {
			b.Healthy, b.Running = 0, 0
		}
		if s >= 30 {
			b.QPS = 0
		}
		return []Endpoint{prodRouter(backend("http://10.0.0.11:8000", 1, 3, 5), b),
			member("http://10.0.0.11:8000", "", 5, 0, 0.5), member("http://10.0.0.12:8000", "", 0, 0, 0)}
	}, up)
	if _, ok := first["dead_backend_traffic"]; ok {
		t.Fatalf("a tripped backend's rate window read as traffic: %v", first)
	}
	first, rep := routerWatch(t, 2*time.Minute, func(s int) []Endpoint {
		b := backend("http://10.0.0.12:8000", 1, 1.5, 3)
		if s >= 10 {
			b.Healthy = 0
		}
		return []Endpoint{prodRouter(backend("http://10.0.0.11:8000", 1, 3, 5), b),
			member("http://10.0.0.11:8000", "", 5, 0, 0.5), member("http://10.0.0.12:8000", "", 3, 0, 0.2)}
	}, up)
	if s, ok := first["dead_backend_traffic"]; !ok || s < 40 {
		t.Fatalf("tripped backend with requests on it: first at %d (%v), want from 40 s", s, ok)
	}
	if f := open(rep, "dead_backend_traffic"); f == nil || !strings.Contains(f.Title, "counts unhealthy") || !hasEvidence(f, "health gauge for http://10.0.0.12:8000 reads 0") {
		t.Fatalf("finding %+v", f)
	}
}

// With no router that reports its backends the rule is not checked, and
// where a router could be in front (two replicas, a prefill or decode
// instance) says why; on one plain engine no router is there to ask, and
// no "not checked: a router's word" line is shown.
func TestDeadBackendNeedsRouter(t *testing.T) {
	for _, c := range []struct {
		name    string
		eps     []Endpoint
		missing bool
	}{
		{"two replicas", []Endpoint{member("http://a:8000", "", 1, 0, 0.1), member("http://b:8000", "", 1, 0, 0.1)}, true},
		{"a decode instance", []Endpoint{member("http://a:8000", model.RoleDecode, 1, 0, 0.1)}, true},
		{"one plain engine", []Endpoint{member("http://a:8000", "", 1, 0, 0.1)}, false},
	} {
		rep := NewDiagnoser(DefaultConfig()).Update(input(c.eps...))
		for _, ch := range rep.Checked {
			if strings.Contains(ch, "dead or tripped backend") || strings.Contains(ch, "large share of the time to first token") {
				t.Fatalf("%s: checked without a router: %q", c.name, ch)
			}
		}
		m := strings.Join(rep.Missing, " ")
		if got := strings.Contains(m, "router's word on its backends") && strings.Contains(m, "router's own latency"); got != c.missing {
			t.Errorf("%s: router inputs listed missing %v, want %v: %v", c.name, got, c.missing, rep.Missing)
		}
	}
}

// A router that stops answering keeps its last word on its backends in
// the endpoint's identity: that word is not read as traffic now.
func TestDeadBackendRouterDownIsNotItsWord(t *testing.T) {
	first, _ := routerWatch(t, 2*time.Minute, func(s int) []Endpoint {
		r := prodRouter(backend("http://10.0.0.11:8000", 1, 2, 4), backend("http://10.0.0.12:8000", 1, 2, 3))
		if s >= 10 {
			r.Scrape.ErrKind, r.Scrape.Err = model.ErrRefused, "connection refused"
		}
		return []Endpoint{r, member("http://10.0.0.11:8000", "", 4, 0, 0.4), member("http://10.0.0.12:8000", "", 3, 0, 0.4)}
	}, func(s int, u string) bool { return s < 10 })
	if _, ok := first["dead_backend_traffic"]; ok {
		t.Fatalf("a down router's stale word read as traffic: %v", first)
	}
}

// dynamoFrontend is a Dynamo frontend with --router-queue-threshold: its
// own queue of prefill requests not yet sent to any worker.
func dynamoFrontend(pending float64) Endpoint {
	return ep(func(e *Endpoint) {
		e.URL, e.Scrape.Endpoint = "http://frontend:8000", "http://frontend:8000"
		e.Scrape.ErrKind, e.Scrape.Err = model.ErrNotFound, "http://frontend:8000/metrics is a NVIDIA Dynamo frontend (router), not an engine"
		e.Identity.Layer = "NVIDIA Dynamo frontend (router)"
		e.Identity.RouterQueue = []model.RouterQueued{{WorkerType: "prefill", Pending: pending}}
		e.State = model.State{}
	})
}

// The frontend holds 12 prefill requests in its own queue (its threshold
// reads the workers as busy) while both prefill workers have empty queues
// and KV at 30 %: the router is the bottleneck, after the router/engine
// lag (not before 20 s). A 10 s burst of the same is not; nor is a queue
// in the router while the engines' own queues are full too.
func TestRouterBottleneck(t *testing.T) {
	up := func(int, string) bool { return true }
	pool := func(waiting, kv float64) []Endpoint {
		return []Endpoint{member("http://p0:8000", model.RolePrefill, 6, waiting, kv), member("http://p1:8000", model.RolePrefill, 5, waiting, kv),
			member("http://d0:8000", model.RoleDecode, 40, 9, 0.95)}
	}
	first, rep := routerWatch(t, time.Minute, func(int) []Endpoint { return append(pool(0, 0.3), dynamoFrontend(12)) }, up)
	s, ok := first["router_bottleneck"]
	if !ok || s < 20 || s > 30 {
		t.Fatalf("router_bottleneck first at %d (%v), want 20..30 s", s, ok)
	}
	f := open(rep, "router_bottleneck")
	if f == nil || !strings.Contains(f.Title, "12 requests wait in the router") || !strings.Contains(f.Title, "2 prefill engines") ||
		!hasEvidence(f, "http://p1:8000: 0 waiting") || hasEvidence(f, "d0") || !hasAction(f, "--router-queue-threshold") {
		t.Fatalf("finding %+v", f)
	}
	first, _ = routerWatch(t, time.Minute, func(s int) []Endpoint {
		if s < 10 {
			return append(pool(0, 0.3), dynamoFrontend(12))
		}
		return append(pool(0, 0.3), dynamoFrontend(0))
	}, up)
	if _, ok := first["router_bottleneck"]; ok {
		t.Errorf("a 10 s burst in the router's queue read as a bottleneck")
	}
	first, _ = routerWatch(t, time.Minute, func(int) []Endpoint { return append(pool(7, 0.97), dynamoFrontend(12)) }, up)
	if _, ok := first["router_bottleneck"]; ok {
		t.Errorf("a router queue with the engines full read as the router's bottleneck")
	}
}

// A router queue with no engine of its worker type watched is not
// checked, and says why.
func TestRouterBottleneckNoEngines(t *testing.T) {
	rep := NewDiagnoser(DefaultConfig()).Update(input(dynamoFrontend(12)))
	if byID(rep, "router_bottleneck") != nil || !strings.Contains(strings.Join(rep.Missing, " "), "whether they have room is not checked") {
		t.Fatalf("findings %v missing %v", ids(rep.Findings), rep.Missing)
	}
}

// The Rust vllm-router opens a worker's circuit breaker yet keeps 2
// requests on it (its health gauge still 1, no rate served): a tripped
// backend still receiving traffic, after the router/engine lag.
func TestDeadBackendBreakerOpen(t *testing.T) {
	first, rep := routerWatch(t, 90*time.Second, func(s int) []Endpoint {
		b := model.Backend{Server: "http://10.0.0.12:8000", Healthy: 1, HealthyOK: true, Running: 2, RunningOK: true, From: "vllm_router_cb_state"}
		if s >= 10 {
			b.Breaker = "open"
		}
		r := prodRouter(model.Backend{Server: "http://10.0.0.11:8000", Healthy: 1, HealthyOK: true, Running: 3, RunningOK: true, Breaker: "closed"}, b)
		r.Identity.Layer = "vLLM router (Rust) (router)"
		return []Endpoint{r, member("http://10.0.0.11:8000", "", 3, 0, 0.3), member("http://10.0.0.12:8000", "", 2, 0, 0.2)}
	}, func(int, string) bool { return true })
	if s, ok := first["dead_backend_traffic"]; !ok || s < 40 || s > 50 {
		t.Fatalf("first at %d (%v), want 40..50 s", s, ok)
	}
	if f := open(rep, "dead_backend_traffic"); f == nil || !strings.Contains(f.Title, "circuit breaker is open: http://10.0.0.12:8000") {
		t.Fatalf("finding %+v", f)
	}
}
