package prometheus

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
)

// routerAnswerFile is the real Prometheus's answer to the router query,
// recorded by TestRealPrometheusRouters (LLMTOP_PROMETHEUS_RECORD=1) and
// replayed by TestRoutersFromRecordedAnswer.
var routerAnswerFile = filepath.Join("testdata", "router-answer.json")

// routerTargets serves four routers on loopback ports, as Prometheus would
// scrape them: the SGLang gateway's and the production-stack router's
// answers from testdata/routers, and a vllm-router and a Dynamo frontend
// whose counters move at each scrape (names from their source, in
// engines/). It returns each one's address by layer ID.
func routerTargets(t *testing.T) map[string]string {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "routers", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var n atomic.Int64
	bodies := map[string]func() string{
		engines.ModelGateway.ID:    func() string { return string(read("smg-gateway-workers.txt")) },
		engines.ProdStackRouter.ID: func() string { return string(read("prodstack-router-a6c01db0.txt")) },
		engines.VLLMRouter.ID: func() string {
			return fmt.Sprintf(`# TYPE vllm_router_worker_health gauge
vllm_router_worker_health{worker="http://10.0.1.1:8000"} 1
vllm_router_worker_health{worker="http://10.0.1.2:8000"} 1
vllm_router_worker_health{worker="http://10.0.1.3:8000"} 0
# TYPE vllm_router_running_requests gauge
vllm_router_running_requests{worker="http://10.0.1.1:8000"} 30
vllm_router_running_requests{worker="http://10.0.1.2:8000"} 8
vllm_router_running_requests{worker="http://10.0.1.3:8000"} 0
# TYPE vllm_router_cb_state gauge
vllm_router_cb_state{worker="http://10.0.1.1:8000"} 0
vllm_router_cb_state{worker="http://10.0.1.2:8000"} 0
vllm_router_cb_state{worker="http://10.0.1.3:8000"} 1
# TYPE vllm_router_max_load gauge
vllm_router_max_load 30
# TYPE vllm_router_min_load gauge
vllm_router_min_load 2
# TYPE vllm_router_load_balancing_events_total counter
vllm_router_load_balancing_events_total %d
`, 100+n.Add(1))
		},
		engines.DynamoFrontend.ID: func() string {
			k := n.Add(1)
			return fmt.Sprintf(`# TYPE dynamo_frontend_router_queue_pending_requests gauge
dynamo_frontend_router_queue_pending_requests{worker_type="prefill"} 6
dynamo_frontend_router_queue_pending_requests{worker_type="decode"} 0
# TYPE dynamo_frontend_time_to_first_token_seconds histogram
dynamo_frontend_time_to_first_token_seconds_bucket{model="m",le="1"} 0
dynamo_frontend_time_to_first_token_seconds_bucket{model="m",le="+Inf"} %d
dynamo_frontend_time_to_first_token_seconds_sum{model="m"} %d
dynamo_frontend_time_to_first_token_seconds_count{model="m"} %d
`, 10*k, 25*k, 10*k)
		},
		engines.EndpointPicker.ID: func() string {
			k := n.Add(1)
			return fmt.Sprintf(`# TYPE llm_d_epp_request_total counter
llm_d_epp_request_total{fairness_id="team-a",model_name="m",priority="0",target_model_name="m"} %d
llm_d_epp_request_total{fairness_id="default-flow",model_name="m",priority="0",target_model_name="m"} %d
# TYPE llm_d_epp_request_error_total counter
llm_d_epp_request_error_total{error_code="BadRequest",fairness_id="team-a",model_name="m",priority="0",target_model_name="m"} %d
`, 4*k, k, k)
		},
		engines.LiteLLM.ID: func() string {
			k := n.Add(1)
			return fmt.Sprintf(`# TYPE litellm_proxy_total_requests_metric_total counter
litellm_proxy_total_requests_metric_total{team="t-1",team_alias="search",user="u1"} %d
litellm_proxy_total_requests_metric_total{team="None",team_alias="None",user="default_user_id"} %d
`, 3*k, k)
		},
	}
	out := map[string]string{}
	for id, body := range bodies {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			io.WriteString(w, body())
		}))
		t.Cleanup(srv.Close)
		out[id] = strings.TrimPrefix(srv.URL, "http://")
	}
	return out
}

// TestRealPrometheusRouters runs the real Prometheus (LLMTOP_PROMETHEUS=/usr/bin/prometheus,
// Debian's 2.42) scraping four routers every second, and checks that the
// fleet source reads through PromQL what the engine source reads from each
// router's own /metrics: each worker's health, requests in flight, breaker
// and consecutive failures, the production-stack router's rate per server,
// vllm-router's load range (acted on: its events grow), Dynamo's router
// queue and end-to-end TTFT (over the window here, since start there).
// With LLMTOP_PROMETHEUS_RECORD=1 it keeps the router query's answer in
// testdata for TestRoutersFromRecordedAnswer. About 15 s; the unit suite
// skips it.
func TestRealPrometheusRouters(t *testing.T) {
	bin := os.Getenv("LLMTOP_PROMETHEUS")
	if bin == "" {
		t.Skip("set LLMTOP_PROMETHEUS=/usr/bin/prometheus to run against the real Prometheus")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	targets := routerTargets(t)
	addr := startPrometheus(t, ctx, bin, jobs(targets))
	time.Sleep(8 * time.Second) // several scrapes: increase() over the window needs two

	w := 10 * time.Second
	src, err := New(Config{URL: "http://" + addr, Window: w})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r := src.Refresh(ctx, now)
	if r.Err != "" {
		t.Fatalf("refresh: %s", r.Err)
	}
	got := scrapesByLayer(r)
	for id, a := range targets {
		ly := engines.LayerOf(id)
		via, ok := got[ly.What()]
		if !ok {
			t.Errorf("%s (%s): not among the refresh's targets", ly.Name, a)
			continue
		}
		direct := engine.ScrapeOnce(ctx, engine.Config{URL: "http://" + a})
		if direct.Identity.Layer != ly.What() {
			t.Fatalf("%s: the direct scrape says %q", a, direct.Identity.Layer)
		}
		t.Logf("%s: via Prometheus %q; direct %q", ly.Name, via.Identity.LayerDetail, direct.Identity.LayerDetail)
		if !reflect.DeepEqual(via.Identity.Backends, direct.Identity.Backends) {
			t.Errorf("%s: backends via Prometheus %+v, direct %+v", ly.Name, via.Identity.Backends, direct.Identity.Backends)
		}
		if !reflect.DeepEqual(via.Identity.RouterQueue, direct.Identity.RouterQueue) {
			t.Errorf("%s: router queue via Prometheus %+v, direct %+v", ly.Name, via.Identity.RouterQueue, direct.Identity.RouterQueue)
		}
		// The fleet line's word on the workers alike (its TTFT and tenants
		// are since start there, over the window here).
		word := "workers"
		if ly == &engines.ProdStackRouter {
			word = "servers"
		}
		if w := engines.WorkersDetail(word, direct.Identity.Backends); !strings.HasPrefix(via.Identity.LayerDetail, w) {
			t.Errorf("%s: detail %q via Prometheus, want it to start %q", ly.Name, via.Identity.LayerDetail, w)
		}
	}
	if lr := got[engines.VLLMRouter.What()].Identity.LoadRange; lr == nil || lr.Max != 30 || lr.Min != 2 || !lr.EventsOK || lr.Events <= 0 || lr.EventsWindow != w || !lr.ActedAt.Equal(now) {
		t.Errorf("vllm-router load range %+v", lr)
	}
	// Tenants over the window here (since start there): the same tenants,
	// named by the same label (the team's alias for its id), the requests
	// with none said apart.
	for _, ly := range []*engines.Layer{&engines.EndpointPicker, &engines.LiteLLM} {
		via := got[ly.What()].Identity
		direct := engine.ScrapeOnce(ctx, engine.Config{URL: "http://" + targets[ly.ID]}).Identity
		if len(via.Tenants) == 0 || len(via.Tenants) != len(direct.Tenants) || via.Tenants[0].Name != direct.Tenants[0].Name ||
			via.Tenants[0].Kind != direct.Tenants[0].Kind || via.Tenants[0].Requests <= 0 || !strings.Contains(via.LayerDetail, " in the last 10s: ") {
			t.Errorf("%s: tenants via Prometheus %+v (%q), direct %+v", ly.Name, via.Tenants, via.LayerDetail, direct.Tenants)
		}
	}
	if d := got[engines.DynamoFrontend.What()].Identity.LayerDetail; !strings.HasPrefix(d, "end-to-end TTFT mean 2.50 s over ") || !strings.HasSuffix(d, " requests in the last 10s") {
		t.Errorf("Dynamo frontend detail %q", d)
	}
	if os.Getenv("LLMTOP_PROMETHEUS_RECORD") != "" {
		q := routerQuery("", promDuration(w))
		resp, err := http.PostForm("http://"+addr+"/api/v1/query", url.Values{"query": {q}, "time": {fmt.Sprint(now.Unix())}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %s", err, resp.Status)
		}
		if err := os.WriteFile(routerAnswerFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s (%d bytes)", routerAnswerFile, len(b))
	}
}

// scrapesByLayer are a refresh's scrapes of layers, by what they are.
func scrapesByLayer(r Refresh) map[string]model.Scrape {
	out := map[string]model.Scrape{}
	for _, m := range r.Msgs {
		if sc, ok := m.(model.Scrape); ok && sc.Identity.Layer != "" {
			out[sc.Identity.Layer] = sc
		}
	}
	return out
}

// jobs are scrape configs of one target per job.
func jobs(targets map[string]string) string {
	var cfg string
	for job, addr := range targets {
		cfg += fmt.Sprintf("  - job_name: %s\n    static_configs:\n      - targets: ['%s']\n", job, addr)
	}
	return cfg
}

// startPrometheus runs the real Prometheus at bin with the scrape configs
// given (the list under scrape_configs:), scraping every second until ctx
// ends, and returns its address once ready.
func startPrometheus(t *testing.T, ctx context.Context, bin, scrape string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := "global: {scrape_interval: 1s}\nscrape_configs:\n" + scrape
	if err := os.WriteFile(filepath.Join(dir, "prom.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prom.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Wait() })
	for i := 0; ; i++ {
		if r, err := http.Get("http://" + addr + "/-/ready"); err == nil && r.StatusCode == 200 {
			r.Body.Close()
			return addr
		}
		if i > 100 {
			t.Fatal("prometheus not ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRealPrometheusSGLangQueueTotals: with priority scheduling SGLang
// writes each queue gauge's total under priority="" and again by priority
// (testdata/pd: _log_gauge_queue_count). Through the real Prometheus the
// fleet source reads the total once: 7 waiting and 20 running, not 14 and
// 40, 5 in the prealloc queue. Its KV hand-over, in ms and MB on SGLang's
// histograms (250 ms and 64 MB a transfer, 4 transfers a scrape), is read
// in seconds and bytes, as the direct scrape reads it.
func TestRealPrometheusSGLangQueueTotals(t *testing.T) {
	bin := os.Getenv("LLMTOP_PROMETHEUS")
	if bin == "" {
		t.Skip("set LLMTOP_PROMETHEUS=/usr/bin/prometheus to run against the real Prometheus")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := 4 * n.Add(1)
		fmt.Fprintf(w, `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="decode",model_name="m",priority="",tp_rank="0"} 20
sglang:num_running_reqs{engine_type="decode",model_name="m",priority="0",tp_rank="0"} 12
sglang:num_running_reqs{engine_type="decode",model_name="m",priority="1",tp_rank="0"} 8
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{engine_type="decode",model_name="m",priority="",tp_rank="0"} 7
sglang:num_queue_reqs{engine_type="decode",model_name="m",priority="0",tp_rank="0"} 3
sglang:num_queue_reqs{engine_type="decode",model_name="m",priority="1",tp_rank="0"} 4
# TYPE sglang:num_decode_prealloc_queue_reqs gauge
sglang:num_decode_prealloc_queue_reqs{engine_type="decode",model_name="m",priority="",tp_rank="0"} 5
sglang:num_decode_prealloc_queue_reqs{engine_type="decode",model_name="m",priority="0",tp_rank="0"} 5
# TYPE sglang:token_usage gauge
sglang:token_usage{engine_type="decode",model_name="m",tp_rank="0"} 0.4
# TYPE sglang:kv_transfer_latency_ms histogram
sglang:kv_transfer_latency_ms_bucket{engine_type="decode",model_name="m",tp_rank="0",le="250.0"} %[1]d
sglang:kv_transfer_latency_ms_bucket{engine_type="decode",model_name="m",tp_rank="0",le="+Inf"} %[1]d
sglang:kv_transfer_latency_ms_sum{engine_type="decode",model_name="m",tp_rank="0"} %[2]d
sglang:kv_transfer_latency_ms_count{engine_type="decode",model_name="m",tp_rank="0"} %[1]d
# TYPE sglang:kv_transfer_total_mb histogram
sglang:kv_transfer_total_mb_bucket{engine_type="decode",model_name="m",tp_rank="0",le="+Inf"} %[1]d
sglang:kv_transfer_total_mb_sum{engine_type="decode",model_name="m",tp_rank="0"} %[3]d
sglang:kv_transfer_total_mb_count{engine_type="decode",model_name="m",tp_rank="0"} %[1]d
`, k, 250*k, 64*k)
	}))
	defer srv.Close()
	addr := startPrometheus(t, ctx, bin, jobs(map[string]string{"sglang": strings.TrimPrefix(srv.URL, "http://")}))
	// Until Prometheus has scraped it a few times (its targets are set a
	// few seconds after it is ready).
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/api/v1/query?query=count_over_time(sglang:num_queue_reqs{priority=%221%22}[1m])")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), `"4"]`) {
				break
			}
		}
		if i > 300 {
			t.Fatal("prometheus never scraped the SGLang target 4 times")
		}
		time.Sleep(100 * time.Millisecond)
	}
	src, err := New(Config{URL: "http://" + addr, Window: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := src.Refresh(ctx, time.Now())
	for _, m := range r.Msgs {
		sc, ok := m.(model.Scrape)
		if !ok || len(sc.Samples) != 1 {
			continue
		}
		sm := sc.Samples[0]
		g := sm.Gauges
		if g[model.Waiting] != 7 || g[model.Running] != 20 || g[model.KVUsage] != 0.4 || g[model.PDPreallocQueue] != 5 {
			t.Errorf("gauges %v, want waiting 7, running 20, KV 0.4, prealloc 5", g)
		}
		x := sm.Derived.Latency[model.KVTransfer]
		if !x.Mean.OK || math.Abs(x.Mean.V-0.25) > 1e-9 || sm.From[string(model.KVTransfer)] != "sglang:kv_transfer_latency_ms" {
			t.Errorf("KV transfer %+v from %q, want a 0.25 s mean", x, sm.From[string(model.KVTransfer)])
		}
		// 4 transfers a scrape of 64 MiB: bytes/s over transfers/s is 64 MiB.
		bps, perS := sm.Derived.Rates[model.KVTransferBytes], x.Count/10
		if perS <= 0 || math.Abs(bps/perS-64*(1<<20)) > 0.01*64*(1<<20) {
			t.Errorf("bytes/s %v over %v transfers/s, want 64 MiB a transfer", bps, perS)
		}
		t.Logf("KV transfer mean %v s, %v bytes/s, %v transfers/s", x.Mean.V, bps, perS)
		return
	}
	t.Fatalf("no SGLang target read: %q %+v", r.Err, r.Msgs)
}
