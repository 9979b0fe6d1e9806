package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The files in testdata/routers are real answers of the layers in front of
// engines, each with its provenance in its "#" header (URL, commit, date);
// testdata/routers/README.md lists them.
func routerFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "routers", name))
	if err != nil {
		t.Fatalf("router capture missing: %v", err)
	}
	if !strings.HasPrefix(string(b), "# ") {
		t.Fatalf("%s lost its provenance header", name)
	}
	return b
}

// seriesBy is a family's value per value of one label.
func seriesBy(t *testing.T, f families, name, lbl string) map[string]float64 {
	t.Helper()
	fam, ok := f[name]
	if !ok {
		t.Fatalf("%s not counted", name)
	}
	out := map[string]float64{}
	for _, m := range fam.GetMetric() {
		out[label(m, lbl)] = scalar(m)
	}
	return out
}

// serveLayer serves a capture on /metrics, and optionally vLLM's
// /v1/models (the production-stack router answers it with its engines'
// model cards); every other route is 404.
func serveLayer(t *testing.T, body []byte, ownedBy string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/metrics":
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write(body)
		case r.URL.Path == "/v1/models" && ownedBy != "":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"` + ownedBy + `"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// checkLayerScrape asserts a scrape names the layer, says what of it is judged,
// and reads nothing of it as an engine's numbers.
func checkLayerScrape(t *testing.T, sc model.Scrape, l *engines.Layer) {
	t.Helper()
	if sc.OK() || len(sc.Samples) != 0 {
		t.Fatalf("a %s was read as an engine: %d samples, err %q", l.Name, len(sc.Samples), sc.Err)
	}
	for _, w := range []string{l.Name, "(" + string(l.Role) + ")", "not an engine", l.Judged()} {
		if !strings.Contains(sc.Err, w) {
			t.Errorf("scrape error %q does not say %q", sc.Err, w)
		}
	}
	if sc.ErrKind != model.ErrNotFound || sc.Hint == "" {
		t.Errorf("kind %q hint %q", sc.ErrKind, sc.Hint)
	}
}

// Issue 26: the production-stack router's own /metrics (its handler run at
// a6c01db0) serves vllm:num_requests_running labelled server, never
// model_name: it is a router, never a vLLM engine, whether llmtop finds
// vLLM's /v1/models there, sniffs the vllm: prefix, or is told --engine
// vllm; and its per-engine numbers are the handler's (running = 3 prefill
// + 5 decode on .11, 0 on the idle .12; .12 unhealthy).
func TestProdStackRouterIsARouterNotAVLLMEngine(t *testing.T) {
	body := routerFile(t, "prodstack-router-a6c01db0.txt")
	r := classifyRole(mustParse(t, body))
	if r.Role != engines.RoleRouter || r.Layer != &engines.ProdStackRouter {
		t.Fatalf("classified %q %v, want the production-stack router", r.Role, r.Layer)
	}
	running := seriesBy(t, r.Counted, engines.ProdStackRunning, engines.ProdStackServerLabel)
	if running["http://10.0.0.11:8000"] != 8 || running["http://10.0.0.12:8000"] != 0 || len(running) != 2 {
		t.Errorf("running per server %v, want .11: 8, .12: 0", running)
	}
	healthy := seriesBy(t, r.Counted, engines.ProdStackHealthy, engines.ProdStackServerLabel)
	if healthy["http://10.0.0.11:8000"] != 1 || healthy["http://10.0.0.12:8000"] != 0 {
		t.Errorf("healthy per server %v, want .11: 1, .12: 0", healthy)
	}
	for name, cfg := range map[string]struct {
		ownedBy string
		forced  model.Engine
	}{"v1/models says vllm": {ownedBy: "vllm"}, "metrics only": {}, "--engine vllm": {forced: model.VLLM}} {
		t.Run(name, func(t *testing.T) {
			srv := serveLayer(t, body, cfg.ownedBy)
			sc := ScrapeOnce(context.Background(), Config{URL: srv.URL, Engine: cfg.forced})
			checkLayerScrape(t, sc, &engines.ProdStackRouter)
			// Its word on each backend travels with the scrape, for the
			// routing rules: .12 unhealthy and idle, .11 busy.
			if bs := sc.Identity.Backends; len(bs) != 2 || bs[1].Server != "http://10.0.0.12:8000" || bs[1].Healthy != 0 || !bs[1].HealthyOK || bs[0].Running != 8 || bs[0].QPS != 4.2 {
				t.Errorf("backends %+v", bs)
			}
		})
	}
}

// The router is told apart by its labels, not by the name: without its
// router-only families, the shadowed gauge labelled server alone still
// names it; a vLLM engine's gauge (model_name) does not.
func TestProdStackShadowNeedsItsLabels(t *testing.T) {
	body := routerFile(t, "prodstack-router-a6c01db0.txt")
	f := mustParse(t, body)
	shadow := families{}
	for _, n := range engines.ProdStackRouter.Shadow.Names {
		if fam, ok := f[n]; ok {
			shadow[n] = fam
		}
	}
	if r := classifyRole(shadow); r.Layer != &engines.ProdStackRouter {
		t.Errorf("the shadowed gauges alone classified %q %v", r.Role, r.Layer)
	}
	if r := classifyRole(fixture(t, "vllm.txt")); r.Role != engines.RoleEngine || r.Layer != nil || len(r.Beside) != 0 {
		t.Errorf("a vLLM engine's fixture classified %q %v %v", r.Role, r.Layer, r.Beside)
	}
}

// A Dynamo frontend (a real answer quoted in ai-dynamo/aiperf's tests)
// answers no engine fingerprint: llmtop names it from its metrics, a
// router, with its own numbers (0 in flight, 170450 requests).
func TestDynamoFrontendIsARouter(t *testing.T) {
	body := routerFile(t, "dynamo-frontend-aiperf.txt")
	r := classifyRole(mustParse(t, body))
	if r.Role != engines.RoleRouter || r.Layer != &engines.DynamoFrontend {
		t.Fatalf("classified %q %v, want the Dynamo frontend", r.Role, r.Layer)
	}
	if v := seriesBy(t, r.Counted, engines.DynamoInflight, "model"); v["qwen/qwen3-0.6b"] != 0 || len(v) != 1 {
		t.Errorf("in flight %v", v)
	}
	checkLayerScrape(t, ScrapeOnce(context.Background(), Config{URL: serveLayer(t, body, "").URL}), &engines.DynamoFrontend)
}

// The vLLM Rust router (issue 30: added as its file in engines/ and one
// line in the layer registry, nothing else): its vllm_router_* families are
// a router's, never a vLLM engine's. The body is written from the names in
// src/metrics.rs @02b9331f (SERVING-LAYERS.md §3a') in the shape of Rust's
// metrics-exporter-prometheus; no capture of a running router was at hand.
func TestVLLMRustRouterIsARouter(t *testing.T) {
	body := []byte(`# TYPE vllm_router_requests_total counter
vllm_router_requests_total{route="/v1/chat/completions"} 42
# TYPE vllm_router_active_workers gauge
vllm_router_active_workers 2
# TYPE vllm_router_worker_load gauge
vllm_router_worker_load{worker="http://10.0.0.11:8000"} 3
vllm_router_worker_load{worker="http://10.0.0.12:8000"} 0
# TYPE vllm_router_cb_state gauge
vllm_router_cb_state{worker="http://10.0.0.12:8000"} 1
# TYPE vllm_router_request_duration_seconds histogram
vllm_router_request_duration_seconds_bucket{route="/v1/chat/completions",le="0.5"} 40
vllm_router_request_duration_seconds_bucket{route="/v1/chat/completions",le="+Inf"} 42
vllm_router_request_duration_seconds_sum{route="/v1/chat/completions"} 9.1
vllm_router_request_duration_seconds_count{route="/v1/chat/completions"} 42
`)
	r := classifyRole(mustParse(t, body))
	if r.Role != engines.RoleRouter || r.Layer != &engines.VLLMRouter {
		t.Fatalf("classified %q %v, want the vLLM Rust router", r.Role, r.Layer)
	}
	checkLayerScrape(t, ScrapeOnce(context.Background(), Config{URL: serveLayer(t, body, "").URL}), &engines.VLLMRouter)
	// Told it is vLLM, it is still the router.
	checkLayerScrape(t, ScrapeOnce(context.Background(), Config{URL: serveLayer(t, body, "vllm").URL, Engine: model.VLLM}), &engines.VLLMRouter)
	// Its word on each worker, for dead_backend_traffic: .12's breaker is
	// open with 2 requests still on it; health and in-flight read where it
	// serves them, unknown where it does not.
	body = append(body, []byte(`# TYPE vllm_router_worker_health gauge
vllm_router_worker_health{worker="http://10.0.0.11:8000"} 1
vllm_router_worker_health{worker="http://10.0.0.12:8000"} 1
# TYPE vllm_router_running_requests gauge
vllm_router_running_requests{worker="http://10.0.0.11:8000"} 3
vllm_router_running_requests{worker="http://10.0.0.12:8000"} 2
`)...)
	bs := layerBackends(classifyRole(mustParse(t, body)))
	if len(bs) != 2 || bs[1].Server != "http://10.0.0.12:8000" || bs[1].Breaker != "open" || bs[1].Running != 2 || !bs[1].RunningOK ||
		bs[1].QPSOK || bs[0].Breaker != "" || bs[0].Healthy != 1 || !strings.Contains(bs[1].From, engines.VLLMRouterBreaker) {
		t.Errorf("backends %+v", bs)
	}
}

// The GIE endpoint picker's answer (old names only, from a real curl in
// yalmashad/Inference-gwapi): a router; the pool's ready endpoints (2) are
// counted once, and nothing is left out as a twin when no current name is
// there.
func TestEndpointPickerDeprecatedNamesAreARouter(t *testing.T) {
	body := routerFile(t, "gie-epp-inference-gwapi.txt")
	r := classifyRole(mustParse(t, body))
	if r.Role != engines.RoleRouter || r.Layer != &engines.EndpointPicker {
		t.Fatalf("classified %q %v, want the endpoint picker", r.Role, r.Layer)
	}
	if len(r.Twins) != 0 {
		t.Errorf("left out %v with no current twin present", r.Twins)
	}
	old := "inference_pool_" + "ready_pods"
	if v := seriesBy(t, r.Counted, old, "name"); v["expensive-llm-pool"] != 2 || len(v) != 1 {
		t.Errorf("ready pods %v, want expensive-llm-pool: 2", v)
	}
	if engines.EndpointPicker.Twin(old) != engines.EPPReadyEndpoints {
		t.Errorf("%s's twin is %q", old, engines.EndpointPicker.Twin(old))
	}
	checkLayerScrape(t, ScrapeOnce(context.Background(), Config{URL: serveLayer(t, body, "").URL}), &engines.EndpointPicker)
}

// Dual emission, counted once. Constructed (no real answer with both names
// was found): the real capture's old pool gauges with their current
// llm_d_epp_ twins beside them, the way llm-d's picker emits both during
// the rename; one old family carries the HELP llm-d's own test harness
// expects ("[Deprecated: Use llm_d_epp_request_total]"), whose twin is
// read from the HELP itself.
func TestEndpointPickerDualEmissionCountsOnce(t *testing.T) {
	r := classifyRole(mustParse(t, eppDualEmission(t)))
	want := map[string]string{
		"inference_pool_" + "ready_pods":         engines.EPPReadyEndpoints,
		"inference_pool_" + "average_queue_size": engines.EPPAvgQueue,
		"inference_objective_" + "request_total": engines.EPPRequestTotal,
	}
	for old, cur := range want {
		if r.Twins[old] != cur {
			t.Errorf("twin of %s = %q, want %q", old, r.Twins[old], cur)
		}
		if _, ok := r.Counted[old]; ok {
			t.Errorf("%s counted beside %s", old, cur)
		}
		if _, ok := r.Counted[cur]; !ok {
			t.Errorf("%s not counted", cur)
		}
	}
	// No twin for the KV gauge: the old one is still counted.
	if _, ok := r.Counted["inference_pool_"+"average_kv_cache_utilization"]; !ok {
		t.Error("an old family without its twin was dropped")
	}
}

// eppDualEmission is the picker's capture with the renamed families
// emitted twice, old and new (TestEndpointPickerDualEmissionCountsOnce).
func eppDualEmission(t *testing.T) []byte {
	body := string(routerFile(t, "gie-epp-inference-gwapi.txt"))
	body += engines.EPPReadyEndpoints + `{name="expensive-llm-pool"} 2` + "\n" +
		engines.EPPAvgQueue + `{name="expensive-llm-pool"} 0` + "\n" +
		"# HELP inference_objective_request_total [ALPHA] [Deprecated: Use " + engines.EPPRequestTotal + "] Counter of inference objective requests broken out for each model and target model.\n" +
		"# TYPE inference_objective_request_total counter\n" +
		`inference_objective_request_total{model_name="m",priority="0",target_model_name="m"} 1` + "\n" +
		engines.EPPRequestTotal + `{model_name="m",priority="0",target_model_name="m"} 1` + "\n"
	return []byte(body)
}

// LMCache as vLLM's KV connector (a real tutorial's curl): the endpoint is
// the vLLM engine, with LMCache beside it, not a KV cache layer alone.
func TestLMCacheBesideVLLMIsTheEngine(t *testing.T) {
	body := routerFile(t, "lmcache-on-vllm-tutorial.txt")
	r := classifyRole(mustParse(t, body))
	if r.Role != engines.RoleEngine || r.Layer != nil || len(r.Beside) != 1 || r.Beside[0] != &engines.LMCache {
		t.Fatalf("classified %q %v beside %v, want vLLM with LMCache beside", r.Role, r.Layer, r.Beside)
	}
	// Its lmcache: lines alone are a KV cache layer.
	var own []string
	for _, l := range strings.SplitAfter(string(body), "\n") {
		if strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(l, "# HELP "), "# TYPE "), engines.LMCache.Prefixes[0]) {
			own = append(own, l)
		}
	}
	r = classifyRole(mustParse(t, []byte(strings.Join(own, ""))))
	if r.Role != engines.RoleKVCache || r.Layer != &engines.LMCache {
		t.Errorf("LMCache alone classified %q %v", r.Role, r.Layer)
	}
	if v := seriesBy(t, r.Counted, engines.LMCache.Prefixes[0]+"num_hit_tokens_total", "worker_id"); v["0"] != 1529 {
		t.Errorf("hit tokens %v, want 1529", v)
	}
}

// Every engine answer llmtop holds is still an engine: the classification
// runs before every Prometheus adapter and must not take one for a layer.
func TestEngineCapturesStayEngines(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	paths = append(paths, filepath.Join("..", "..", "testdata", "engines", "llamacpp-metrics.txt"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parseProm(b)
		if err != nil {
			continue // trtllm.txt's iteration stats are JSON-era text
		}
		if r := classifyRole(f); r.Role != engines.RoleEngine || r.Layer != nil {
			t.Errorf("%s classified %q %v (%s)", p, r.Role, r.Layer, r.Why)
		}
	}
}

// Dynamo's frontend serves its router's own queue only with
// --router-queue-threshold (its docs' table, SERVING-LAYERS.md §5.1): the
// real capture has none, so none is read; with the gauge added in the
// docs' shape, it is read by worker type for the routing rules.
func TestDynamoFrontendRouterQueue(t *testing.T) {
	body := routerFile(t, "dynamo-frontend-aiperf.txt")
	if q := routerQueue(classifyRole(mustParse(t, body))); q != nil {
		t.Errorf("queue read from a capture without it: %+v", q)
	}
	body = append(append([]byte{}, body...), []byte(`# HELP dynamo_frontend_router_queue_pending_requests Requests pending in the router scheduler queue
# TYPE dynamo_frontend_router_queue_pending_requests gauge
dynamo_frontend_router_queue_pending_requests{worker_type="prefill"} 12
dynamo_frontend_router_queue_pending_requests{worker_type="decode"} 0
`)...)
	sc := ScrapeOnce(context.Background(), Config{URL: serveLayer(t, body, "").URL})
	checkLayerScrape(t, sc, &engines.DynamoFrontend)
	q := sc.Identity.RouterQueue
	if len(q) != 2 || q[0] != (model.RouterQueued{WorkerType: "decode"}) || q[1] != (model.RouterQueued{WorkerType: "prefill", Pending: 12}) {
		t.Errorf("queue %+v", q)
	}
}
