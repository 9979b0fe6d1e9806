package diagnosis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// member is a pool member at URL u: role, running, waiting, KV.
func member(u string, role model.PDRole, running, waiting, kv float64) Endpoint {
	return ep(func(e *Endpoint) {
		e.URL, e.State.Key.Endpoint, e.Scrape.Endpoint = u, u, u
		e.Identity.Role = role
		e.State.Running, e.State.Waiting, e.State.KVUsage = model.Some(running), model.Some(waiting), model.Some(kv)
	})
}

// watch feeds the Diagnoser the pool every 2 s for d, at[t] giving the
// members at t (seconds since t0), and returns the first time each
// finding id was open and the last report.
func watch(t *testing.T, d time.Duration, at func(s int) []Endpoint) (map[string]int, Report) {
	return watchWith(t, DefaultConfig(), d, at)
}

func watchWith(t *testing.T, cfg Config, d time.Duration, at func(s int) []Endpoint) (map[string]int, Report) {
	t.Helper()
	dg := NewDiagnoser(cfg)
	first := map[string]int{}
	var rep Report
	for s := 0; s <= int(d/time.Second); s += 2 {
		now := t0.Add(time.Duration(s) * time.Second)
		eps := at(s)
		for i := range eps {
			eps[i].LastOK, eps[i].Scrape.Time, eps[i].State.Time = now, now, now
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

func open(rep Report, id string) *Finding { return byID(rep, id) }

// dynamo #7836: a KV-aware router keeps 3 of 5 decode workers at 100 %
// while 2 sit at 0 %. The finding opens after RouteHold, critical (two of
// five is not a blip), and names every worker.
func TestPoolStarvedDecodeWorkers(t *testing.T) {
	first, rep := watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{
			member("http://d0", model.RoleDecode, 48, 6, 1.0), member("http://d1", model.RoleDecode, 47, 9, 0.99),
			member("http://d2", model.RoleDecode, 50, 4, 1.0), member("http://d3", model.RoleDecode, 0, 0, 0),
			member("http://d4", model.RoleDecode, 0, 0, 0),
		}
	})
	f := open(rep, "pool_starved")
	if f == nil {
		t.Fatalf("pool_starved not open; findings %v", ids(rep.Findings))
	}
	if first["pool_starved"] > 30 || first["pool_starved"] < 20 {
		t.Errorf("opened at %d s, want after the 20 s hold and within 30 s", first["pool_starved"])
	}
	if f.Severity != model.SevCrit || f.Title != "2 of 5 decode workers of m idle while the other 3 are loaded: d3, d4" || !hasEvidence(f, "http://d3: running 0, waiting 0, KV 0") {
		t.Errorf("%s %q %+v", f.Severity, f.Title, f.Evidence)
	}
	if open(rep, "routing_skew") != nil {
		t.Error("routing_skew says it twice")
	}
}

// dynamo #12864: prefill pods waiting 83 / 78 / 5 / 0 / 0.
func TestPoolQueueSkewPrefill(t *testing.T) {
	_, rep := watch(t, time.Minute, func(s int) []Endpoint {
		return []Endpoint{
			member("http://p0", model.RolePrefill, 8, 83, 0.7), member("http://p1", model.RolePrefill, 8, 78, 0.7),
			member("http://p2", model.RolePrefill, 8, 5, 0.5), member("http://p3", model.RolePrefill, 6, 0, 0.3),
			member("http://p4", model.RolePrefill, 5, 0, 0.3),
		}
	})
	f := open(rep, "pool_queue_skew")
	if f == nil {
		t.Fatalf("pool_queue_skew not open; findings %v", ids(rep.Findings))
	}
	if !strings.Contains(f.Title, "waiting 83 / 78 / 5 / 0 / 0") || !strings.Contains(f.Title, "prefill workers") || f.Endpoint != "http://p0" {
		t.Errorf("%q on %s", f.Title, f.Endpoint)
	}
}

// A hot prefix (one system prompt) piled onto the engine that caches it:
// it queues at KV 96 % while its peers sit at 20 %.
func TestPrefixPileup(t *testing.T) {
	hot := member("http://a", "", 40, 22, 0.96)
	hot.State.PrefixHit = model.Some(0.92)
	peers := []Endpoint{member("http://b", "", 4, 0, 0.2), member("http://c", "", 3, 0, 0.18)}
	for i := range peers {
		peers[i].State.PrefixHit = model.Some(0.35)
	}
	_, rep := watch(t, time.Minute, func(int) []Endpoint { return append([]Endpoint{hot}, peers...) })
	f := open(rep, "prefix_pileup")
	if f == nil || f.Endpoint != "http://a" || !hasEvidence(f, "prefix-cache hits 92 %") {
		t.Fatalf("prefix_pileup %+v; findings %v", f, ids(rep.Findings))
	}
	if open(rep, "routing_skew") != nil || open(rep, "one_worker") != nil {
		t.Errorf("said twice: %v", ids(rep.Findings))
	}
}

// sglang #15473: with load counters stuck at 0 every request goes to the
// first worker.
func TestOneWorkerTakesEveryRequest(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		eps := []Endpoint{member("http://w0", "", 30, 4, 0.8), member("http://w1", "", 1, 0, 0.05), member("http://w2", "", 1, 0, 0.05)}
		eps[0].State.RequestsPS, eps[1].State.RequestsPS, eps[2].State.RequestsPS = model.Some(9.6), model.Some(0.1), model.Some(0.1)
		return eps
	})
	f := open(rep, "one_worker")
	if f == nil || f.Endpoint != "http://w0" || !strings.HasPrefix(f.Title, "98 % of the requests") {
		t.Fatalf("one_worker %+v; findings %v", f, ids(rep.Findings))
	}
}

// LMCache #1106: a decode instance whose TTFT is 32 s of 35 s because the
// KV transfer stalls.
func TestKVTransferStall(t *testing.T) {
	d := member("http://d", model.RoleDecode, 10, 0, 0.4)
	d.State.Latency[model.TTFT] = dist(33, 36, 38, 35)
	d.State.Latency[model.KVTransfer] = dist(30, 34, 36, 32)
	d.State.From = map[string]string{string(model.KVTransfer): "vllm:nixl_xfer_time_seconds", string(model.TTFT): "vllm:time_to_first_token_seconds"}
	_, rep := watch(t, time.Minute, func(int) []Endpoint { return []Endpoint{d} })
	f := open(rep, "kv_transfer_stall")
	if f == nil || !strings.Contains(f.Title, "91 % of TTFT") || !strings.Contains(f.Title, "(32 s of 35 s)") {
		t.Fatalf("kv_transfer_stall %+v; findings %v", f, ids(rep.Findings))
	}
	// Without the transfer histogram a decode instance is not judged, and
	// the report says so: absent is not zero.
	d2 := member("http://d", model.RoleDecode, 10, 0, 0.4)
	d2.State.Latency[model.TTFT] = dist(33, 36, 38, 35)
	r := Evaluate(input(d2), DefaultConfig())
	if byID(r, "kv_transfer_stall") != nil || !strings.Contains(strings.Join(r.Missing, "\n"), "KV transfer time") {
		t.Errorf("no histogram: findings %v, missing %v", ids(r.Findings), r.Missing)
	}
}

// vllm #49538: router and engine gauges disagree for seconds by design.
// A worker that just started reads 0 running for 18 s while the others
// are full, then takes its share; another's gauge reads 0 for 8 s between
// scrapes. Neither is starvation, skew or a queue spread: nothing opens.
func TestRouterEngineLagIsNotSkew(t *testing.T) {
	started := t0.Add(5 * time.Second)
	lagged := func(s int) []Endpoint {
		eps := []Endpoint{member("http://d0", model.RoleDecode, 48, 6, 1.0), member("http://d1", model.RoleDecode, 47, 5, 0.98),
			member("http://d2", model.RoleDecode, 46, 5, 0.97)}
		if s >= 5 { // joins at 5 s, cold until 23 s
			n := member("http://d3", model.RoleDecode, 0, 0, 0)
			if s >= 23 {
				n = member("http://d3", model.RoleDecode, 45, 5, 0.95)
			}
			n.State.Started = started
			eps = append(eps, n)
		}
		if s >= 60 && s < 68 { // d1's gauge lags the router's for 8 s
			eps[1].State.Running, eps[1].State.Waiting = model.Some(0), model.Some(0)
		}
		return eps
	}
	first, _ := watch(t, 2*time.Minute, lagged)
	for _, id := range []string{"pool_starved", "pool_queue_skew", "routing_skew", "one_worker", "prefix_pileup"} {
		if s, ok := first[id]; ok {
			t.Errorf("%s opened at %d s", id, s)
		}
	}
	// The same sequence judged without allowing for the lag (a 6 s hold,
	// no cold-start grace) reads it as starvation: the allowance is what
	// keeps it quiet.
	cfg := DefaultConfig()
	cfg.RouteHold, cfg.RouteLag = 6*time.Second, 0
	if first, _ := watchWith(t, cfg, 2*time.Minute, lagged); func() bool { _, ok := first["pool_starved"]; return !ok }() {
		t.Errorf("without the lag allowance the sequence opens nothing (%v): the test proves nothing", first)
	}
}

// A healthy routed fleet (two pools, balanced within each) shows no
// routing finding over ten minutes.
func TestHealthyRoutedFleetQuiet(t *testing.T) {
	first, _ := watch(t, 10*time.Minute, func(s int) []Endpoint {
		var eps []Endpoint
		for i := range 2 {
			eps = append(eps, member(fmt.Sprintf("http://p%d", i), model.RolePrefill, float64(6+(s/2+i)%3), float64((s/2+i)%4), 0.4))
		}
		for i := range 3 {
			eps = append(eps, member(fmt.Sprintf("http://d%d", i), model.RoleDecode, float64(40+(s/2+i)%5), 0, 0.6+0.01*float64(i)))
		}
		return eps
	})
	for id, s := range first {
		if strings.HasPrefix(id, "pool_") || id == "routing_skew" || id == "one_worker" || id == "prefix_pileup" || id == "kv_transfer_stall" {
			t.Errorf("%s opened at %d s on a healthy fleet", id, s)
		}
	}
}

// A router classified as one (its Identity.Layer) is shown as what it is:
// no "metrics endpoint returns 404" finding for an endpoint that is not an
// engine.
func TestRouterIsNoMissingMetrics(t *testing.T) {
	r := ep(func(e *Endpoint) {
		e.URL = "http://router:8001"
		e.Identity = model.Identity{Layer: "vLLM production-stack router (router)"}
		e.State = model.State{}
		e.Scrape = model.Scrape{Endpoint: e.URL, Time: t0, Err: "http://router:8001/metrics is a vLLM production-stack router (router), not an engine", ErrKind: model.ErrNotFound}
	})
	rep := Evaluate(input(r), DefaultConfig())
	for _, f := range rep.Findings {
		if f.Endpoint == r.URL {
			t.Errorf("finding on the router: %s %q", f.ID, f.Title)
		}
	}
}

// Prefill-starved (32k-token prompts: the prefill pool queues 40 a worker
// while decode idles at KV 12 %) and decode-starved (every decode worker
// at KV 97 % with a queue while prefill keeps up).
func TestPDImbalance(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{member("http://p0", model.RolePrefill, 4, 42, 0.8), member("http://p1", model.RolePrefill, 4, 38, 0.8),
			member("http://d0", model.RoleDecode, 6, 0, 0.12), member("http://d1", model.RoleDecode, 5, 0, 0.1)}
	})
	f := open(rep, "pd_imbalance")
	if f == nil || !strings.HasPrefix(f.Title, "prefill-starved") || !strings.Contains(f.Title, "(2P:2D)") || !hasAction(f, "add a prefill worker") {
		t.Fatalf("prefill-starved: %+v; findings %v", f, ids(rep.Findings))
	}
	_, rep = watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{member("http://p0", model.RolePrefill, 3, 0, 0.3),
			member("http://d0", model.RoleDecode, 250, 12, 0.97), member("http://d1", model.RoleDecode, 248, 15, 0.98), member("http://d2", model.RoleDecode, 251, 9, 0.96)}
	})
	if f := open(rep, "pd_imbalance"); f == nil || !strings.HasPrefix(f.Title, "decode-starved") || !hasAction(f, "add a decode worker (now 1P:3D)") {
		t.Fatalf("decode-starved: %+v; findings %v", f, ids(rep.Findings))
	}
}

// Failed KV hand-overs on a decode instance: a finding with the rate; none
// counted (or the counter absent) is none.
func TestKVTransferFailures(t *testing.T) {
	d := member("http://d", model.RoleDecode, 10, 0, 0.4)
	d.State.KVFailPS = model.Some(0.4)
	d.State.From = map[string]string{string(model.KVTransferFailures): "vllm:nixl_num_failed_transfers_total"}
	runCases(t, []ruleCase{
		{name: "failing", in: input(d), want: "kv_transfer_failures", check: func(t *testing.T, f *Finding) {
			if !strings.Contains(f.Title, "0.4/s (about 24 in the window)") {
				t.Errorf("%q", f.Title)
			}
		}},
		{name: "none failed", in: input(member("http://d", model.RoleDecode, 10, 0, 0.4)), none: "kv_transfer_failures"},
	})
}
