package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// bumpTTFT adds n observations of TTFT in (0.1, 0.25] s summing to sum to a
// vLLM scrape, and 1000 generated tokens.
func bumpTTFT(body []byte, n, sum float64) []byte {
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || strings.HasPrefix(line, "#") {
			out = append(out, line)
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			out = append(out, line)
			continue
		}
		switch {
		case strings.HasPrefix(line, "vllm:time_to_first_token_seconds_bucket"):
			le := line[strings.Index(line, `le="`)+4:]
			le = le[:strings.IndexByte(le, '"')]
			if b, _ := strconv.ParseFloat(le, 64); b >= 0.25 {
				v += n
			}
		case strings.HasPrefix(line, "vllm:time_to_first_token_seconds_count"):
			v += n
		case strings.HasPrefix(line, "vllm:time_to_first_token_seconds_sum"):
			v += sum
		case strings.HasPrefix(line, "vllm:generation_tokens_total"):
			v += 1000
		}
		out = append(out, line[:i+1]+strconv.FormatFloat(v, 'f', -1, 64))
	}
	return []byte(strings.Join(out, "\n"))
}

// serveFake starts a fake engine; for vLLM the second metrics scrape sees
// ten more TTFT observations and 1000 more generated tokens.
func serveFake(t *testing.T, eng model.Engine) string {
	t.Helper()
	fake := enginetest.New(eng)
	var h http.Handler = fake
	if eng == model.VLLM {
		first := enginetest.Fixture("vllm.txt")
		second := bumpTTFT(first, 10, 1.7)
		var hits atomic.Int64
		mux := http.NewServeMux()
		mux.Handle("/", fake)
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
			if hits.Add(1) == 1 {
				_, _ = w.Write(first)
			} else {
				_, _ = w.Write(second)
			}
		})
		h = mux
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// entry is one endpoint of the JSON as a script sees it.
type entry struct {
	URL        string                     `json:"url"`
	Engine     string                     `json:"engine"`
	Version    string                     `json:"version"`
	Models     []string                   `json:"models"`
	Health     string                     `json:"health"`
	Model      string                     `json:"model"`
	MaxContext *float64                   `json:"max_context"`
	Metrics    map[string]json.RawMessage `json:"metrics"`
	Error      string                     `json:"error"`
}

func (e entry) num(t *testing.T, key string) *float64 {
	t.Helper()
	raw, ok := e.Metrics[key]
	if !ok {
		t.Fatalf("%s: metrics has no %q key (the contract lists it)", e.Engine, key)
	}
	var v *float64
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %s = %s: %v", e.Engine, key, raw, err)
	}
	return v
}

func (e entry) dist(t *testing.T, key string) map[string]*float64 {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(e.Metrics[key], &d); err != nil {
		t.Fatalf("%s: %s: %v", e.Engine, key, err)
	}
	out := map[string]*float64{}
	for _, k := range []string{"p50", "p90", "p99", "mean"} {
		x, present := d[k]
		if !present {
			t.Fatalf("%s: %s has no %q", e.Engine, key, k)
		}
		if f, ok := x.(float64); ok {
			out[k] = &f
		}
	}
	return out
}

func TestSnapshotJSONEachEngine(t *testing.T) {
	engineFlags.engine, engineFlags.apiKey, engineFlags.metricsPath, engineFlags.timeout = "", "", "", 2*time.Second
	var urls []string
	for _, eng := range model.Engines {
		urls = append(urls, serveFake(t, eng))
	}
	var out bytes.Buffer
	if err := runSnapshot(context.Background(), &out, urls, true, 300*time.Millisecond); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, out.String())
	}
	var doc struct {
		Endpoints []entry `json:"endpoints"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	byEngine := map[string]entry{}
	for _, e := range doc.Endpoints {
		if _, seen := byEngine[e.Engine]; !seen {
			byEngine[e.Engine] = e // the first entry of each endpoint
		}
		if e.Error != "" {
			t.Errorf("%s: error %q", e.Engine, e.Error)
		}
	}
	type check struct {
		model   string
		version string
		nums    map[string]float64 // exact values
		nulls   []string           // not exposed: null, never 0
	}
	checks := map[string]check{
		"vllm": {enginetest.VLLMModel, "0.11.2",
			map[string]float64{"running": 37, "waiting": 5, "kv_cache_usage_ratio": 0.8123, "kv_capacity_tokens": 470080, "preemptions_per_s": 0},
			[]string{"prefix_cache_hit_ratio"}}, // no queries in the window: no data
		"sglang": {enginetest.SGLangModel, "0.5.4",
			map[string]float64{"running": 42, "waiting": 3, "kv_cache_usage_ratio": 0.71, "prefix_cache_hit_ratio": 0.3125},
			nil},
		"tgi": {enginetest.TGIModel, "3.3.6-dev0",
			map[string]float64{"running": 24, "waiting": 4, "kv_cache_usage_ratio": 0.155321},
			[]string{"prefix_cache_hit_ratio", "preemptions_per_s"}},
		"llamacpp": {enginetest.LlamaCppModel, "b6701-34af94cd",
			// 4 slots of n_ctx 4096 holding 4048 tokens, a remote endpoint without its log: whether
			// the cache is unified is unknown, so the usage is a floor (split) and a top (unified)
			// and the pool size is not claimed.
			map[string]float64{"running": 3, "waiting": 1, "kv_cache_usage_ratio": 0.24707, "kv_cache_usage_ratio_max": 0.988281},
			[]string{"requests_per_s", "preemptions_per_s", "kv_capacity_tokens"}},
		"trtllm": {enginetest.TRTLLMModel, "1.1.0",
			map[string]float64{"running": 53, "waiting": 2, "kv_cache_usage_ratio": 0.6625, "prefix_cache_hit_ratio": 0.41},
			[]string{"preemptions_per_s"}},
		"triton": {enginetest.TritonModel, "2.59.0",
			map[string]float64{"running": 12, "waiting": 5, "kv_cache_usage_ratio": 0.25},
			[]string{"prompt_tokens_per_s", "generation_tokens_per_s", "prefix_cache_hit_ratio"}},
		"ollama": {enginetest.OllamaModel, "0.5.1", nil,
			[]string{"running", "waiting", "kv_cache_usage_ratio", "prefix_cache_hit_ratio", "preemptions_per_s",
				"prompt_tokens_per_s", "generation_tokens_per_s", "requests_per_s"}},
	}
	for eng, c := range checks {
		e, ok := byEngine[eng]
		if !ok {
			t.Errorf("no %s endpoint in %s", eng, out.String())
			continue
		}
		if e.Model != c.model || e.Version != c.version || e.Health != "up" || len(e.Models) == 0 || e.Metrics == nil {
			t.Errorf("%s: model %q version %q health %q models %v", eng, e.Model, e.Version, e.Health, e.Models)
			continue
		}
		for k, want := range c.nums {
			if got := e.num(t, k); got == nil || math.Abs(*got-want) > 1e-6 {
				t.Errorf("%s: %s = %v, want %v", eng, k, fmtPtr(got), want)
			}
		}
		for _, k := range c.nulls {
			if got := e.num(t, k); got != nil {
				t.Errorf("%s: %s = %v, want null (not exposed)", eng, k, *got)
			}
		}
		for _, k := range []string{"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "queue_ms", "prefill_ms", "decode_ms"} {
			e.dist(t, k)
		}
	}
	// vLLM's window held 10 TTFTs in (100, 250] ms summing to 1.7 s:
	// histogram_quantile interpolates p50 = 100 + 150·5/10 = 175 ms.
	v := byEngine["vllm"]
	ttft := v.dist(t, "ttft_ms")
	for k, want := range map[string]float64{"p50": 175, "p90": 235, "p99": 248.5, "mean": 170} {
		if got := ttft[k]; got == nil || math.Abs(*got-want) > 1e-6 {
			t.Errorf("vllm ttft %s = %v, want %v", k, fmtPtr(got), want)
		}
	}
	if g := v.num(t, "generation_tokens_per_s"); g == nil || *g <= 0 {
		t.Errorf("vllm gen tok/s = %v, want > 0 (1000 tokens between scrapes)", fmtPtr(g))
	}
	if e2e := v.dist(t, "e2e_ms"); e2e["p50"] != nil {
		t.Errorf("vllm e2e p50 = %v with no request in the window, want null", *e2e["p50"])
	}
	if n := len(byEngine["ollama"].Models); n != 3 {
		t.Errorf("ollama models = %v, want the loaded one and two local", byEngine["ollama"].Models)
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// refusedAddr is a loopback address nothing listens on (a port just
// freed).
func refusedAddr(t *testing.T) string {
	t.Helper()
	engineFlags.engine, engineFlags.timeout = "", time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestSnapshotNothingAnswers(t *testing.T) {
	addr := refusedAddr(t)
	var out bytes.Buffer
	err := runSnapshot(context.Background(), &out, []string{addr}, true, 250*time.Millisecond)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 3 || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v, want exit 3 with a one-line reason", err)
	}
	if !strings.Contains(out.String(), `"error"`) {
		t.Errorf("the JSON still reports the endpoint: %s", out.String())
	}
}

func TestSnapshotBadEngineFlag(t *testing.T) {
	engineFlags.engine = "vllmm"
	defer func() { engineFlags.engine = "" }()
	err := runSnapshot(context.Background(), &bytes.Buffer{}, []string{"127.0.0.1:1"}, true, time.Second)
	if err == nil || !strings.Contains(err.Error(), "want one of") {
		t.Errorf("err = %v", err)
	}
}

// A broken config file stops snapshot as it stops the monitor and
// diagnose: the error names the file and line, and nothing is scraped.
func TestSnapshotRejectsABrokenConfig(t *testing.T) {
	engineFlags.engine, engineFlags.timeout = "", time.Second
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	path := filepath.Join(dir, "llmtop", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("theme = \"dark\"\n[thresholds]\nttft_p99_ms = x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := runSnapshot(context.Background(), &out, []string{serveFake(t, model.VLLM)}, true, 250*time.Millisecond)
	if err == nil || !strings.HasPrefix(err.Error(), path+":3: ttft_p99_ms") {
		t.Fatalf("err %v, want it to name %s:3", err, path)
	}
	if out.Len() > 0 {
		t.Errorf("a snapshot was printed despite the broken config:\n%s", out.String())
	}
}

// The table for people: "--" where the engine exposes nothing, "≈" on
// bucket estimates, approximations spelled out.
func TestSnapshotTable(t *testing.T) {
	engineFlags.engine, engineFlags.timeout = "", 2*time.Second
	var out bytes.Buffer
	urls := []string{serveFake(t, model.VLLM), serveFake(t, model.TGI)}
	if err := runSnapshot(context.Background(), &out, urls, false, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"vllm  0.11.2  UP", "running", "37", "≈175", "81.2%", "TTFT", "--",
		"tgi  3.3.6-dev0  UP", "approx TTFT: ≈ mean validation + queue + prefill-batch", "TGI has no KV metric"} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
}

// Rates from two scrapes two seconds apart, computed by the model.
func TestBuildSnapshotRates(t *testing.T) {
	t1 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	mk := func(at time.Time, gen float64) model.Scrape {
		s := model.NewSample("http://x", "m", at, model.FromScrape)
		s.Gauges[model.Running] = 2
		s.Counters[model.GenTokens] = gen
		return model.Scrape{Endpoint: "http://x", Time: at, Samples: []model.Sample{s},
			Identity: model.Identity{Engine: model.VLLM, Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m", MaxContext: 4096}}}}
	}
	snap := buildSnapshot(t1, []endpointResult{{url: "http://x", scrapes: []model.Scrape{mk(t1, 100), mk(t1.Add(2*time.Second), 1100)}}}, diagnosis.DefaultConfig(), nil)
	e := snap.Endpoints[0]
	if e.Metrics == nil || e.Metrics.GenerationTokensPerS != model.Some(500) || e.Metrics.WindowS != 2 ||
		e.Metrics.PromptTokensPerS.OK || e.MaxContext != model.Some(4096) {
		t.Errorf("entry = %+v metrics = %+v", e, e.Metrics)
	}
}

// `llmtop snapshot` of a refused port printed the host's "cgroup --" and
// "/dev/shm -- (free --)" with no word why (they are read through the
// engine's process, and there is none): one line says they were not
// checked, and why.
func TestSnapshotRefusedPortSaysWhyHostFieldsAreMissing(t *testing.T) {
	addr := refusedAddr(t)
	var out bytes.Buffer
	_ = runSnapshot(context.Background(), &out, []string{addr}, false, 250*time.Millisecond)
	s := out.String()
	if !strings.Contains(s, "  host ") {
		t.Skipf("no host reading on this machine:\n%s", s)
	}
	if strings.Contains(s, "cgroup --") || strings.Contains(s, "/dev/shm --") || strings.Contains(s, "busiest thread") {
		t.Errorf("bare host fields:\n%s", s)
	}
	if !strings.Contains(s, "cgroup, /dev/shm, threads: not checked, because no engine process was read") {
		t.Errorf("no reason:\n%s", s)
	}
}
