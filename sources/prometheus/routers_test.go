package prometheus

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// replayRouters is a Prometheus that answers the router query with the
// real Prometheus's recorded answer (testdata/router-answer.json, recorded
// by TestRealPrometheusRouters against Prometheus 2.42.0+ds-5+deb12u1 on
// 2026-11-26) and every other query with no series.
func replayRouters(t *testing.T) *Source {
	t.Helper()
	rec, err := os.ReadFile(routerAnswerFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.FormValue("query"), `"llmtop_concept", "router:`) {
			w.Write(rec)
			return
		}
		w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	t.Cleanup(srv.Close)
	s, err := New(Config{URL: srv.URL, Window: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The six layers through Prometheus's recorded answer (four routers, llm-d's
// picker, a LiteLLM proxy): each a layer's target, never an engine, with
// its own word read as the direct scrape reads it, the tenants over the
// window (TestRealPrometheusRouters compares the two live).
func TestRoutersFromRecordedAnswer(t *testing.T) {
	now := time.Now()
	r := replayRouters(t).Refresh(context.Background(), now)
	if r.Err != "" || r.Targets != 6 {
		t.Fatalf("err %q, %d targets", r.Err, r.Targets)
	}
	got := scrapesByLayer(r)
	gw := got[engines.ModelGateway.What()]
	if gw.Identity.Engine == model.VLLM || !strings.Contains(gw.Err, "not an engine") || !strings.Contains(gw.Err, engines.ModelGateway.Judged()) ||
		gw.Identity.LayerDetail != "3 workers, 3 healthy, breaker open on 1 (http://10.0.0.13:30000); 27 running by its count" {
		t.Errorf("gateway: %q %q", gw.Err, gw.Identity.LayerDetail)
	}
	if bs := gw.Identity.Backends; len(bs) != 3 || bs[2].Breaker != "open" || bs[2].Failures != 10 || !bs[2].FailuresOK ||
		bs[2].From != "smg_worker_health, smg_worker_requests_active, smg_worker_cb_state, smg_worker_cb_consecutive_failures" {
		t.Errorf("gateway backends %+v", bs)
	}
	ps := got[engines.ProdStackRouter.What()]
	if bs := ps.Identity.Backends; len(bs) != 2 || bs[0].QPS != 4.2 || !bs[0].QPSOK || bs[0].Running != 8 || bs[1].Healthy != 0 || !bs[1].HealthyOK {
		t.Errorf("production-stack backends %+v", bs)
	}
	vr := got[engines.VLLMRouter.What()]
	if lr := vr.Identity.LoadRange; lr == nil || lr.Max != 30 || lr.Min != 2 || lr.Events <= 0 || lr.EventsWindow != 10*time.Second || !lr.ActedAt.Equal(now) ||
		lr.From != "vllm_router_max_load, vllm_router_min_load, vllm_router_load_balancing_events_total" {
		t.Errorf("vllm-router load range %+v", lr)
	}
	if ts := got[engines.EndpointPicker.What()].Identity.Tenants; len(ts) != 1 || ts[0].Name != "team-a" || ts[0].Kind != "fairness id" || ts[0].Failed <= 0 {
		t.Errorf("picker tenants %+v", ts)
	}
	lt := got[engines.LiteLLM.What()].Identity
	if len(lt.Tenants) != 1 || lt.Tenants[0].Name != "search" || lt.Tenants[0].Kind != "team" || !strings.Contains(lt.LayerDetail, "req with no team") {
		t.Errorf("LiteLLM tenants %+v %q", lt.Tenants, lt.LayerDetail)
	}
	dy := got[engines.DynamoFrontend.What()]
	if q := dy.Identity.RouterQueue; len(q) != 2 || q[1].WorkerType != "prefill" || q[1].Pending != 6 ||
		!strings.HasPrefix(dy.Identity.LayerDetail, "end-to-end TTFT mean 2.50 s over ") {
		t.Errorf("Dynamo frontend %+v %q", q, dy.Identity.LayerDetail)
	}
}

// Through Prometheus the routing rules judge what they judge directly:
// the gateway's open breaker on a worker llmtop does not read, the
// vllm-router's skew by its own counts and range, Dynamo's router queue
// with no prefill engine watched (said "not checked").
func TestRoutingRulesThroughPrometheus(t *testing.T) {
	s := replayRouters(t)
	mon := core.New(core.Options{Window: 10 * time.Second})
	start := time.Now()
	for i := 0; i <= 30; i++ {
		feed(s.Refresh(context.Background(), start.Add(time.Duration(i)*2*time.Second)), mon)
	}
	rep := mon.Report()
	found := map[string]string{}
	for _, f := range rep.Findings {
		if f.Active() {
			found[f.ID] = f.Title
		}
	}
	if !strings.Contains(found["router_load_skew"], "its own range 30 to 2 in flight, acted on within 10s") {
		t.Errorf("router_load_skew: %q (findings %v)", found["router_load_skew"], found)
	}
	missing := strings.Join(rep.Missing, " ")
	for _, want := range []string{"took http://10.0.0.13:30000 out", "no prefill engines behind it are watched"} {
		if !strings.Contains(missing, want) {
			t.Errorf("not said: %q (missing %v)", want, rep.Missing)
		}
	}
}

// SGLang's gauges are asked for their total series only (priority="",
// engines.Spec.TotalMatch): TestRealPrometheusSGLangQueueTotals checks the
// answer with the real Prometheus.
func TestSGLangGaugesAskTheTotal(t *testing.T) {
	q := builder{f: familyOf(model.SGLang), match: `namespace="prod"`, window: "5m"}.stateQuery()
	for _, n := range []string{"sglang:num_queue_reqs", "sglang:num_running_reqs"} {
		if !strings.Contains(q, n+`{namespace="prod",priority=""}`) {
			t.Errorf("%s asked without its total matcher", n)
		}
	}
}

// The KV hand-over through Prometheus: vLLM's NIXL bytes as the
// histogram's sum, SGLang's transfer time from ms and its size from MiB
// (TestRealPrometheusSGLangQueueTotals reads them back from the real
// Prometheus).
func TestKVHandOverQueries(t *testing.T) {
	v := builder{f: familyOf(model.VLLM), window: "1m"}
	if q := v.stateQuery(); !strings.Contains(q, "rate(vllm:nixl_bytes_transferred_sum[1m])") || !strings.Contains(q, "rate(vllm:nixl_num_kv_expired_reqs_total[1m])") {
		t.Error("vLLM's NIXL bytes or expiries not asked")
	}
	if q := v.latencyQuery(); !strings.Contains(q, "rate(vllm:nixl_xfer_time_seconds_sum[1m])") {
		t.Error("vLLM's NIXL transfer time not asked")
	}
	s := builder{f: familyOf(model.SGLang), window: "1m"}
	if q := s.latencyQuery(); !strings.Contains(q, "rate(sglang:kv_transfer_latency_ms_count[1m]))) * 0.001") {
		t.Errorf("SGLang's transfer time not read in seconds")
	}
	if q := s.stateQuery(); !strings.Contains(q, "rate(sglang:kv_transfer_total_mb_sum[1m]))) * 1.048576e+06") {
		t.Errorf("SGLang's transfer size not read in bytes")
	}
}
