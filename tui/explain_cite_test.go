package tui

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// oldVLLM and newVLLM are the same server state under the names of vLLM
// before v0.11 and since (the older scrape of TestVLLMOldNames,
// sources/engine).
func vllmScrapeBody(kv, itl string, n int) string {
	return fmt.Sprintf(`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 2
# TYPE %[1]s gauge
%[1]s{model_name="m"} 0.25
# TYPE %[2]s histogram
%[2]s_bucket{le="0.05",model_name="m"} %[3]d
%[2]s_bucket{le="+Inf",model_name="m"} %[4]d
%[2]s_count{model_name="m"} %[4]d
%[2]s_sum{model_name="m"} %[5]g
`, kv, itl, 8*n, 10*n, 0.4*float64(n))
}

// explainFor feeds two scrapes of body through the real vLLM adapter and
// returns the `e` overlay as drawn.
func explainFor(t *testing.T, kv, itl string) string {
	t.Helper()
	fake := enginetest.New(model.VLLM)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	m := newTestModel()
	for i := 1; i <= 2; i++ {
		fake.SetMetrics([]byte(vllmScrapeBody(kv, itl, 100*i)))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		sc := engine.ScrapeOnce(ctx, engine.Config{URL: srv.URL, Engine: model.VLLM, Timeout: 5 * time.Second})
		cancel()
		if !sc.OK() {
			t.Fatalf("scrape: %s", sc.Err)
		}
		sc.Endpoint, sc.Time = testURL, t0.Add(time.Duration(i)*time.Second)
		for j := range sc.Samples {
			sc.Samples[j].Endpoint, sc.Samples[j].Time = testURL, sc.Time
		}
		m.Update(sc)
	}
	m.Update(press("e"))
	return screen(t, m, 200, 70)
}

// Issue 14 item 8: `e` says where this endpoint's values were read from:
// the older names on an older vLLM, the current ones on a current vLLM,
// beside the table's list of both (engines.Metrics).
func TestExplainReadNowFollowsTheScrape(t *testing.T) {
	for _, c := range []struct{ kv, itl, otherKV, otherITL string }{
		{"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", "vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds"},
		{"vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds"},
	} {
		out := explainFor(t, c.kv, c.itl)
		var readNow []string
		for _, l := range strings.Split(out, "\n") {
			if i := strings.Index(l, "read now: "); i >= 0 {
				readNow = append(readNow, strings.TrimRight(strings.TrimSpace(l[i+len("read now: "):]), "┃ "))
			}
		}
		got := strings.Join(readNow, "|")
		for _, n := range []string{c.kv, c.itl} {
			if !strings.Contains("|"+got+"|", "|"+n+"|") {
				t.Errorf("read now %q lacks %s", got, n)
			}
		}
		for _, n := range []string{c.otherKV, c.otherITL} {
			if strings.Contains("|"+got+"|", "|"+n+"|") {
				t.Errorf("read now %q names %s, which this server does not serve", got, n)
			}
			// The from: line lists both generations.
			if !strings.Contains(out, n) {
				t.Errorf("the from: lines leave out %s", n)
			}
		}
	}
}
