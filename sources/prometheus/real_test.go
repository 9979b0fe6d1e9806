package prometheus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/engine"
)

// olderNames serves the replica at addr under the metric names vLLM
// published before v0.11 (engines.Metrics' older names) and returns
// its own address.
func olderNames(t *testing.T, ctx context.Context, addr string) string {
	t.Helper()
	rename := strings.NewReplacer("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
		"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds",
		"vllm:prefix_cache_", "vllm:gpu_prefix_cache_")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+addr+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header.Set("Content-Type", r.Header.Get("Content-Type"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if r.URL.Path == "/metrics" {
			body = []byte(rename.Replace(string(body)))
		}
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	})}
	go srv.Serve(ln)
	go func() { <-ctx.Done(); srv.Close() }()
	return ln.Addr().String()
}

// TestRealPrometheus runs the real Prometheus (LLMTOP_PROMETHEUS=/usr/bin/prometheus,
// Debian's 2.42) scraping three simulated vLLM replicas (healthy, healthy,
// kv-pressure) every second, and checks that what the source reads
// through PromQL agrees with llmtop's own direct scrapes of the same
// replicas over the same 10 s: KV and running within what a second of
// drift explains, generation tok/s within 25 %, TTFT p99 within 35 %.
// The second replica publishes the names of vLLM before v0.11 (its
// metrics renamed on the way out): Prometheus reads its KV and ITL under
// them, beside the others' current names, and the samples say which.
// It takes about 40 s; the unit suite skips it.
func TestRealPrometheus(t *testing.T) {
	bin := os.Getenv("LLMTOP_PROMETHEUS")
	if bin == "" {
		t.Skip("set LLMTOP_PROMETHEUS=/usr/bin/prometheus to run against the real Prometheus")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var targets []string
	for i, sc := range []string{"healthy", "healthy", "kv-pressure"} {
		s, err := sim.New(sim.Config{Scenario: sc, Seed: uint64(i + 1), Background: true, StartupTime: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ctx, ln)
		addr := ln.Addr().String()
		if i == 1 {
			addr = olderNames(t, ctx, addr)
		}
		targets = append(targets, addr)
	}
	addr := startPrometheus(t, ctx, bin, fmt.Sprintf("  - job_name: vllm\n    static_configs:\n      - targets: ['%s']\n        labels: {namespace: prod}\n",
		strings.Join(targets, "', '")))
	time.Sleep(20 * time.Second) // history for the windows

	// Direct scrapes 10 s apart, and the Prometheus read at the second.
	direct := core.New(core.Options{Window: 10 * time.Second})
	scrapeAll := func() time.Time {
		for _, tg := range targets {
			sctx, stop := context.WithCancel(ctx)
			engine.NewPoller(engine.Config{URL: "http://" + tg}).Run(sctx, func(sc model.Scrape) {
				direct.Apply(sc)
				stop()
			})
		}
		return time.Now()
	}
	scrapeAll()
	time.Sleep(10 * time.Second)
	end := scrapeAll()
	pcfg := Config{URL: "http://" + addr, Window: 10 * time.Second}
	if dir := os.Getenv("LLMTOP_PROMETHEUS_CAPTURE"); dir != "" {
		// keep the answers (testdata/answers: the decoder's tests read them)
		pcfg.transport = &capture{dir: dir, rt: http.DefaultTransport}
	}
	src, err := New(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	via := core.New(core.Options{Window: 10 * time.Second})
	feed(src.Refresh(ctx, end.Add(-time.Second)), via) // the targets known, up{} is asked too
	r := src.Refresh(ctx, end)
	if r.Err != "" || r.Targets != 3 || r.Queries != len(families)+3 {
		t.Fatalf("refresh: err %q, %d targets, %d queries", r.Err, r.Targets, r.Queries)
	}
	// The refresh read through what the last one kept (each series'
	// labels held by their bytes, the fleet's reading: histogram_quantile
	// answers in another order each time) reads what a source that kept
	// nothing reads, at the same instant.
	tc := end.Add(-3 * time.Second)
	kept := src.Refresh(ctx, tc)
	src.decoders, src.fleet = nil, newFleet(src.targets)
	anew := src.Refresh(ctx, tc)
	if !reflect.DeepEqual(kept.Msgs, anew.Msgs) {
		t.Errorf("read through what was kept:\n%+v\nread anew:\n%+v", kept.Msgs, anew.Msgs)
	}
	feed(r, via)
	doc := via.Snapshot()
	kvs := map[string]float64{}
	for _, ej := range doc.Endpoints {
		if ej.Engine != model.VLLM || ej.Model == "" || ej.Source != "prometheus" || ej.Name != "vllm/"+strings.TrimPrefix(ej.URL, "http://") {
			t.Errorf("endpoint %s: engine %q model %q source %q name %q", ej.URL, ej.Engine, ej.Model, ej.Source, ej.Name)
		}
		k := model.Key{Endpoint: ej.URL, Model: ej.Model}
		p := via.Store().State(k, 10*time.Second)
		d := direct.Store().State(k, 10*time.Second)
		kvs[ej.URL] = p.KVUsage.V
		t.Logf("%s: KV %.3f vs %.3f direct; running %v vs %v; gen %.0f vs %.0f tok/s; TTFT p99 %v vs %v",
			ej.URL, p.KVUsage.V, d.KVUsage.V, p.Running.V, d.Running.V, p.GenTPS.V, d.GenTPS.V,
			p.Latency[model.TTFT].P99, d.Latency[model.TTFT].P99)
		if !p.KVUsage.OK || math.Abs(p.KVUsage.V-d.KVUsage.V) > 0.15 {
			t.Errorf("%s KV %v via Prometheus, %v direct", ej.URL, p.KVUsage, d.KVUsage)
		}
		if !p.GenTPS.OK || !d.GenTPS.OK || math.Abs(p.GenTPS.V-d.GenTPS.V) > 0.25*d.GenTPS.V {
			t.Errorf("%s generation %v tok/s via Prometheus, %v direct", ej.URL, p.GenTPS, d.GenTPS)
		}
		pt, dt := p.Latency[model.TTFT].P99, d.Latency[model.TTFT].P99
		if pt.OK != dt.OK || (pt.OK && math.Abs(pt.V-dt.V) > 0.35*dt.V) {
			t.Errorf("%s TTFT p99 %v via Prometheus, %v direct", ej.URL, pt, dt)
		}
	}
	for i, tg := range targets {
		k := model.Key{Endpoint: "http://" + tg, Model: ""}
		for _, ej := range doc.Endpoints {
			if ej.URL == k.Endpoint {
				k.Model = ej.Model
			}
		}
		p, d := via.Store().State(k, 10*time.Second), direct.Store().State(k, 10*time.Second)
		kv, itl := "vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds"
		if i == 1 {
			kv, itl = "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"
		}
		if p.From[string(model.KVUsage)] != kv || p.From[string(model.ITL)] != itl || d.From[string(model.ITL)] != itl {
			t.Errorf("%s: read from %v via Prometheus, %v direct; want KV from %s, ITL from %s", tg, p.From, d.From, kv, itl)
		}
		pi, di := p.Latency[model.ITL].P99, d.Latency[model.ITL].P99
		if !pi.OK || !di.OK || math.Abs(pi.V-di.V) > 0.35*di.V {
			t.Errorf("%s ITL p99 %v via Prometheus, %v direct", tg, pi, di)
		}
	}
	// 30 s into its scenario the kv-pressure replica's pool is filling,
	// not yet full: it holds the most.
	if kv := kvs["http://"+targets[2]]; kv <= kvs["http://"+targets[0]] || kv <= kvs["http://"+targets[1]] {
		t.Errorf("the kv-pressure replica's KV %v is not the pressed one: %v", kv, kvs)
	}
}

// capture writes each answer of the source's queries to a file in dir,
// named for the query's concept terms, and passes it on.
type capture struct {
	dir string
	rt  http.RoundTripper
	n   atomic.Int64
}

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := c.rt.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	form, _ := url.ParseQuery(string(body))
	name := "up"
	if q := form.Get("query"); !strings.HasPrefix(q, "up") {
		name = "state"
		if strings.Contains(q, "histogram_quantile") {
			name = "latency"
		}
		if m := regexp.MustCompile(`\b([a-z_]+:)`).FindStringSubmatch(q); m != nil {
			name = strings.TrimSuffix(m[1], ":") + "-" + name
		}
	}
	f := filepath.Join(c.dir, fmt.Sprintf("%s-%d.json", name, c.n.Add(1)))
	if err := os.WriteFile(f, b, 0o644); err != nil {
		return nil, err
	}
	return resp, nil
}
