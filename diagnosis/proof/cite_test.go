package proof

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// vllmBody is a vLLM exposition after n seconds of a loaded server: KV
// nearly full, requests waiting (no preemption in the window), slow tokens, slow prefill
// and a cold prefix cache. kv, itl, queries and hits name the KV-usage
// gauge, the inter-token histogram and the prefix-cache counters: before
// v0.11 vllm:gpu_cache_usage_perc, vllm:time_per_output_token_seconds and
// vllm:gpu_prefix_cache_* (early V1; the names of the older scrape in
// TestVLLMOldNames, sources/engine), after it vllm:kv_cache_usage_perc,
// vllm:inter_token_latency_seconds and vllm:prefix_cache_*.
func vllmBody(kv, itl, queries, hits string, n float64) string {
	const m = `model_name="m"`
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{%s} 30\n", m)
	fmt.Fprintf(&b, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{%s} 12\n", m)
	fmt.Fprintf(&b, "# TYPE %[1]s gauge\n%[1]s{%[2]s} 0.99\n", kv, m)
	fmt.Fprintf(&b, "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{%s} 3\n", m)
	fmt.Fprintf(&b, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{%s} %g\n", m, 400*n)
	fmt.Fprintf(&b, "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{%s} %g\n", m, 8000*n)
	fmt.Fprintf(&b, "# TYPE vllm:request_success_total counter\nvllm:request_success_total{finished_reason=\"stop\",%s} %g\n", m, 2*n)
	// A prefix cache that seldom hits, under the names of the generation.
	fmt.Fprintf(&b, "# TYPE %[1]s counter\n%[1]s{%[2]s} %[3]g\n# TYPE %[4]s counter\n%[4]s{%[2]s} %[5]g\n", queries, m, 8000*n, hits, 400*n)
	// 500 gaps a second, nearly all between 50 and 75 ms.
	hist(&b, itl, 500*n, 0.062, [4]float64{0.025, 0.05, 0.075, 0.1})
	// Two requests a second whose first token takes ≈1.5 s, nearly all of
	// it prefill: TTFT over its SLO with the queue short.
	hist(&b, "vllm:time_to_first_token_seconds", 2*n, 1.5, [4]float64{0.5, 1, 2, 5})
	hist(&b, "vllm:request_queue_time_seconds", 2*n, 0.02, [4]float64{0.01, 0.05, 0.1, 0.5})
	hist(&b, "vllm:request_prefill_time_seconds", 2*n, 1.45, [4]float64{0.5, 1, 2, 5})
	return b.String()
}

// hist writes a histogram of c observations with mean mean: 2 % in the
// second bucket, the rest in the third.
func hist(b *strings.Builder, name string, c, mean float64, le [4]float64) {
	const m = `model_name="m"`
	fmt.Fprintf(b, "# TYPE %s histogram\n", name)
	for i, x := range []float64{0, 0.02 * c, c, c} {
		fmt.Fprintf(b, "%s_bucket{le=\"%g\",%s} %g\n", name, le[i], m, x)
	}
	fmt.Fprintf(b, "%s_bucket{le=\"+Inf\",%s} %g\n%s_sum{%s} %g\n%s_count{%s} %g\n", name, m, c, name, m, mean*c, name, m, c)
}

// generation is one release line's names for the metrics the test reads.
type generation struct{ kv, itl, queries, hits string }

var (
	beforeV011 = generation{"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", "vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_hits_total"}
	sinceV011  = generation{"vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds", "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"}
)

// citations runs two scrapes 30 s apart through the real adapter, the
// store and the rules, and returns every evidence source of the report.
func citations(t *testing.T, g generation) (map[string]bool, []diagnosis.Finding) {
	t.Helper()
	fake := enginetest.New(model.VLLM)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	store := model.NewStore(model.DefaultStoreConfig)
	var last model.Scrape
	var key model.Key
	for i, n := range []float64{600, 630} {
		fake.SetMetrics([]byte(vllmBody(g.kv, g.itl, g.queries, g.hits, n)))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		last = engine.ScrapeOnce(ctx, engine.Config{URL: srv.URL, Engine: model.VLLM, Timeout: 5 * time.Second})
		cancel()
		if !last.OK() || len(last.Samples) != 1 {
			t.Fatalf("scrape %d: %+v", i, last)
		}
		s := last.Samples[0]
		s.Time, s.Endpoint = t0.Add(time.Duration(i)*30*time.Second), srv.URL
		last.Time = s.Time
		key = model.Key{Endpoint: srv.URL, Model: s.Model}
		store.Add(s)
	}
	ep := diagnosis.EndpointFromStore(store, key, last.Identity, last, last.Time, window)
	fs := diagnosis.Evaluate(diagnosis.Input{Time: last.Time, Endpoints: []diagnosis.Endpoint{ep}}, diagnosis.DefaultConfig()).Findings
	cited := map[string]bool{}
	for _, f := range fs {
		for _, e := range f.Evidence {
			cited[e.Source] = true
		}
	}
	return cited, fs
}

// Issue 14 item 8: findings cite the metric the adapter read, an older
// vLLM's names on an older vLLM and the current ones on a current one,
// never the other generation's. (Before, a concept the adapter recorded
// nothing for, the prefix-cache hit rate, cited the current names on any
// vLLM.)
func TestFindingsCiteTheNamesTheEngineServes(t *testing.T) {
	for _, c := range []struct {
		name        string
		want, wrong generation
	}{
		{"before v0.11", beforeV011, sinceV011},
		{"v0.11 and later", sinceV011, beforeV011},
	} {
		t.Run(c.name, func(t *testing.T) {
			cited, fs := citations(t, c.want)
			for _, n := range []string{c.want.kv, c.want.itl, c.want.hits + " / " + c.want.queries} {
				if !cited[n] {
					t.Errorf("%s not cited; cited %v (findings %v)", n, cited, idsOf(fs))
				}
			}
			for src := range cited {
				for _, n := range []string{c.wrong.kv, c.wrong.itl, c.wrong.queries, c.wrong.hits} {
					// vllm:prefix_cache_hits_total is inside vllm:gpu_prefix_cache_hits_total.
					if strings.Contains(" "+src, " "+n) || strings.Contains(src, "/ "+n) {
						t.Errorf("cites %q: %s is a name this engine does not serve", src, n)
					}
				}
			}
		})
	}
}
