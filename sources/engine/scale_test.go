package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// seriesPerModel is how many series genVLLM writes for each model.
const seriesPerModel = 10

// genVLLM writes a vLLM scrape naming n models, seriesPerModel series each.
func genVLLM(n int) []byte {
	var b strings.Builder
	fams := []struct{ name, typ, extra string }{
		{"vllm:num_requests_running", "gauge", ""},
		{"vllm:num_requests_waiting", "gauge", ""},
		{"vllm:kv_cache_usage_perc", "gauge", ""},
		{"vllm:prompt_tokens_total", "counter", ""},
		{"vllm:generation_tokens_total", "counter", ""},
		{"vllm:num_preemptions_total", "counter", ""},
		{"vllm:prefix_cache_queries_total", "counter", ""},
		{"vllm:prefix_cache_hits_total", "counter", ""},
		{"vllm:request_success_total", "counter", `finished_reason="stop",`},
		{"vllm:request_success_total", "counter", `finished_reason="length",`},
	}
	typed := map[string]bool{}
	for _, f := range fams {
		if !typed[f.name] {
			fmt.Fprintf(&b, "# TYPE %s %s\n", f.name, f.typ)
			typed[f.name] = true
		}
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%s{engine=\"0\",%smodel_name=\"m%06d\"} %d\n", f.name, f.extra, i, i%7+1)
		}
	}
	return []byte(b.String())
}

// An endpoint with more distinct model names than the cap is read up to
// the cap, and every sample says what was left out; it is never silent.
func TestScrapeCapsModelsWithNote(t *testing.T) {
	body := genVLLM(maxLabelValues + 500)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			_, _ = w.Write(body)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	sc := ScrapeOnce(context.Background(), Config{URL: srv.URL, Engine: model.VLLM})
	if !sc.OK() {
		t.Fatalf("scrape: %s", sc.Err)
	}
	if len(sc.Samples) != maxLabelValues {
		t.Fatalf("%d samples, want the cap %d", len(sc.Samples), maxLabelValues)
	}
	want := "truncated: 1 500 distinct model_name values, showing the first 1 000"
	for _, s := range sc.Samples[:3] {
		if !contains(s.Notes, want) {
			t.Fatalf("sample %s notes %q, want %q", s.Model, s.Notes, want)
		}
	}
}

func TestLimitSeriesCapsTotal(t *testing.T) {
	f := mustParse(t, genVLLM(50)) // 500 series
	notes := limitSeries(f, 120, 1000)
	n := 0
	for _, fam := range f {
		n += len(fam.Metric)
	}
	if n != 120 || len(notes) != 1 || notes[0] != "truncated: 500 series, showing the first 120" {
		t.Fatalf("kept %d series, notes %q", n, notes)
	}
	// Splitting by model then gives each kept series once.
	parts := byModel(f, "model_name")
	got := 0
	for _, p := range parts {
		for _, fam := range p {
			got += len(fam.Metric)
		}
	}
	if got != 120 {
		t.Fatalf("byModel holds %d series, want 120", got)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// BenchmarkMapVLLMModels maps scrapes of 100, 1 000 and 10 000 models (1 k,
// 10 k and 100 k series) with no cap: time and allocations per series stay
// flat (the per-model filtering it replaced was quadratic).
func BenchmarkMapVLLMModels(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		f := mustParse(b, genVLLM(n))
		b.Run(fmt.Sprintf("series=%d/models=%d", n*seriesPerModel, n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := len(mapVLLM(f, testMeta(""))); got != n {
					b.Fatalf("%d samples", got)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*seriesPerModel), "ns/series")
		})
	}
}

// BenchmarkScrapeVLLM100k is the whole path of one scrape of 100 k series
// naming 10 k models: parse, cap, map. The caps bound what is kept: 1 000
// models, so memory past parsing does not grow with the endpoint.
func BenchmarkScrapeVLLM100k(b *testing.B) {
	body := genVLLM(10_000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := parseProm(body)
		if err != nil {
			b.Fatal(err)
		}
		limitSeries(f, maxSeries, maxLabelValues)
		if got := len(mapVLLM(f, testMeta(""))); got != maxLabelValues {
			b.Fatalf("%d samples", got)
		}
	}
}

// Ollama's model list is JSON, not Prometheus: the same bound on models
// applies, with the same kind of note.
func TestOllamaModelListCapped(t *testing.T) {
	var ps strings.Builder
	ps.WriteString(`{"models":[`)
	for i := 0; i < maxLabelValues+200; i++ {
		if i > 0 {
			ps.WriteByte(',')
		}
		fmt.Fprintf(&ps, `{"name":"m%05d","size":10,"size_vram":10,"context_length":4096}`, i)
	}
	ps.WriteString(`]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			_, _ = w.Write([]byte("Ollama is running"))
		case "/api/version":
			_, _ = w.Write([]byte(`{"version":"0.17.4"}`))
		case "/api/ps":
			_, _ = w.Write([]byte(ps.String()))
		case "/api/tags":
			_, _ = w.Write([]byte(`{"models":[]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	sc := ScrapeOnce(context.Background(), Config{URL: srv.URL, Engine: model.Ollama})
	if !sc.OK() {
		t.Fatalf("scrape: %s", sc.Err)
	}
	if len(sc.Identity.Models) != maxLabelValues || len(sc.Samples) != maxLabelValues {
		t.Fatalf("%d models, %d samples, want %d", len(sc.Identity.Models), len(sc.Samples), maxLabelValues)
	}
	if !contains(sc.Samples[0].Notes, "truncated: 1 200 models, showing the first 1 000") {
		t.Errorf("notes %q", sc.Samples[0].Notes)
	}
}
