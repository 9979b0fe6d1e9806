package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/engines"
)

// The names llmtop reads of the SGLang gateway's workers are the ones its
// source serves (the verbatim excerpt in testdata/routers), labelled by
// worker, with the breaker's encoding its HELP text gives.
func TestModelGatewayWorkerNamesAreTheSource(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "routers", "smg-worker-gauges-73da68ca.rs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, n := range []string{engines.SMGHealth, engines.SMGRunning, engines.SMGBreaker, engines.SMGFailures} {
		if !strings.Contains(src, `"`+n+`",`) {
			t.Errorf("%s not in the gateway's source", n)
		}
	}
	if !strings.Contains(src, `"`+engines.SMGWorkerLabel+`" => worker_interned`) || !strings.Contains(src, "0=closed, 1=open, 2=half_open") {
		t.Error("worker label or breaker encoding not the source's")
	}
}

// The gateway's word on its three workers: the third's breaker open after
// 10 consecutive failures, nothing on it, its health check passing; the
// router line says so.
func TestModelGatewayWorkers(t *testing.T) {
	r := classifyRole(mustParse(t, routerFile(t, "smg-gateway-workers.txt")))
	if r.Layer != &engines.ModelGateway {
		t.Fatalf("classified %v", r.Layer)
	}
	bs := layerBackends(r)
	if len(bs) != 3 {
		t.Fatalf("backends %+v", bs)
	}
	w3 := bs[2]
	if w3.Server != "http://10.0.0.13:30000" || w3.Breaker != "open" || !w3.FailuresOK || w3.Failures != 10 || !w3.RunningOK || w3.Running != 0 ||
		!w3.HealthyOK || w3.Healthy != 1 || w3.QPSOK {
		t.Errorf("worker 3 %+v", w3)
	}
	if bs[0].Breaker != "closed" || bs[0].Running != 14 || !strings.Contains(bs[0].From, engines.SMGBreaker) || !strings.Contains(bs[0].From, engines.SMGFailures) {
		t.Errorf("worker 1 %+v", bs[0])
	}
	if d := layerDetail(r); d != "3 workers, 3 healthy, breaker open on 1 (http://10.0.0.13:30000); 27 running by its count" {
		t.Errorf("detail %q", d)
	}
	// Through a scrape, the identity carries them.
	sc := ScrapeOnce(t.Context(), Config{URL: serveLayer(t, routerFile(t, "smg-gateway-workers.txt"), "").URL})
	if len(sc.Identity.Backends) != 3 || sc.Identity.Backends[2].Breaker != "open" || !strings.Contains(sc.Identity.LayerDetail, "breaker open on 1") {
		t.Errorf("scrape identity %+v", sc.Identity)
	}
}

// sgl-router, before the smg_ rename, served the same gauges as
// sgl_router_*: read under those names when the current ones are absent.
func TestModelGatewayOldNames(t *testing.T) {
	body := []byte(`# TYPE sgl_router_worker_health gauge
sgl_router_worker_health{worker="http://a:30000"} 0
sgl_router_worker_health{worker="http://b:30000"} 1
# TYPE sgl_router_cb_state gauge
sgl_router_cb_state{worker="http://a:30000"} 2
# TYPE sgl_router_running_requests gauge
sgl_router_running_requests{worker="http://b:30000"} 5
`)
	r := classifyRole(mustParse(t, body))
	bs := layerBackends(r)
	if r.Layer != &engines.ModelGateway || len(bs) != 2 || bs[0].Breaker != "half-open" || bs[0].Healthy != 0 || bs[0].RunningOK || bs[1].Running != 5 {
		t.Fatalf("%v %+v", r.Layer, bs)
	}
	if d := layerDetail(r); d != "2 workers, 1 healthy, half-open on 1 (http://a:30000); 5 running by its count" {
		t.Errorf("detail %q", d)
	}
}

// vllm-router's load range (vllm_router_max_load / _min_load, unlabelled,
// "Max/min load across all workers" in its docs/metrics.md) is the one it
// last acted on: ActedAt is the scrape at which llmtop saw its
// load-balancing events grow, unset before llmtop saw any grow, kept while
// they stand still.
func TestVLLMRouterLoadRangeActedAt(t *testing.T) {
	events := []int{5, 5, 7, 7}
	var n atomic.Int32 // the scrape the test is at (each may ask /metrics more than once)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `# TYPE vllm_router_max_load gauge
vllm_router_max_load 80
# TYPE vllm_router_min_load gauge
vllm_router_min_load 3
# TYPE vllm_router_load_balancing_events_total counter
vllm_router_load_balancing_events_total %d
# TYPE vllm_router_worker_health gauge
vllm_router_worker_health{worker="http://w1:8000"} 1
vllm_router_worker_health{worker="http://w2:8000"} 1
`, events[n.Load()])
	}))
	t.Cleanup(srv.Close)
	s := newSession(Config{URL: srv.URL})
	var acted []time.Time
	for i := range events {
		n.Store(int32(i))
		sc := s.scrape(t.Context())
		lr := sc.Identity.LoadRange
		if lr == nil || lr.Max != 80 || lr.Min != 3 || !lr.EventsOK || !strings.Contains(lr.From, engines.VLLMRouterMaxLoad) {
			t.Fatalf("load range %+v (err %q)", lr, sc.Err)
		}
		acted = append(acted, lr.ActedAt)
	}
	if !acted[0].IsZero() || !acted[1].IsZero() || acted[2].IsZero() || !acted[3].Equal(acted[2]) {
		t.Errorf("acted at %v", acted)
	}
}
