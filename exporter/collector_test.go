package exporter

import (
	"math"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

func TestNothingClaimedBeforeTheFirstRefresh(t *testing.T) {
	_, fams := gather(t, New("v1.2.3"))
	if len(fams) != 1 || one(t, fams, "llmtop_build_info", map[string]string{"version": "v1.2.3"}) != 1 {
		t.Fatalf("before a refresh want only llmtop_build_info, got %d families", len(fams))
	}
}

// The vLLM fixture (shared/fixtures/metrics/vllm.txt) scraped twice, one
// second apart, the second time with every counter and histogram doubled:
// the exporter's gauges are the capture's, its rates the capture's
// counters per second, its percentiles present, ordered, in seconds.
func TestVLLMCaptureThroughTheCore(t *testing.T) {
	body := enginetest.Fixture("vllm.txt")
	f, url := serve(t, model.VLLM, nil)
	mon := core.New(core.Options{Endpoints: []string{url}})
	feed(t, mon, model.VLLM, url, url, t0)
	f.SetMetrics(doubled(body))
	feed(t, mon, model.VLLM, url, url, t0.Add(time.Second))
	mon.Tick(t0.Add(time.Second))
	c := New("test")
	c.Publish(Capture(mon))
	_, fams := gather(t, c)

	ep := map[string]string{"endpoint": url, "engine": "vllm", "model": enginetest.VLLMModel}
	for name, ref := range map[string]string{
		"llmtop_requests_running":     "vllm:num_requests_running",
		"llmtop_requests_waiting":     "vllm:num_requests_waiting",
		"llmtop_kv_cache_usage_ratio": "vllm:kv_cache_usage_perc",
	} {
		if got, want := one(t, fams, name, ep), fixtureSum(t, body, ref); got != want {
			t.Errorf("%s = %v, the capture's %s is %v", name, got, ref, want)
		}
	}
	if got, want := one(t, fams, "llmtop_generation_tokens_per_second", ep), fixtureSum(t, body, "vllm:generation_tokens_total"); math.Abs(got-want) > 1e-6*want {
		t.Errorf("generation tok/s = %v, want the capture's counter over 1 s = %v", got, want)
	}
	if got := one(t, fams, "llmtop_endpoint_up", map[string]string{"endpoint": url}); got != 1 {
		t.Errorf("llmtop_endpoint_up = %v, want 1", got)
	}
	if got := one(t, fams, "llmtop_endpoint_state", map[string]string{"endpoint": url, "state": "serving"}); got != 1 {
		t.Errorf("state serving = %v, want 1", got)
	}
	var ps []float64
	for _, p := range []string{"50", "90", "99"} {
		v := one(t, fams, "llmtop_ttft_seconds", map[string]string{"endpoint": url, "percentile": p, "window": "1m", "estimate": "true"})
		if v <= 0 || v > 2560 { // vLLM's largest TTFT bucket is 2560 s
			t.Errorf("TTFT p%s = %v s: not a latency in seconds", p, v)
		}
		ps = append(ps, v)
	}
	if ps[0] > ps[1] || ps[1] > ps[2] {
		t.Errorf("TTFT percentiles out of order: %v", ps)
	}
	for _, mf := range fams {
		if mf.GetType() != dto.MetricType_GAUGE && mf.GetType() != dto.MetricType_COUNTER {
			t.Errorf("%s is %v: want gauges and counters only", mf.GetName(), mf.GetType())
		}
		if mf.GetType() == dto.MetricType_COUNTER != strings.HasSuffix(mf.GetName(), "_total") {
			t.Errorf("%s: _total is for counters only", mf.GetName())
		}
	}
}

// A real llama-server capture (testdata/engines/llamacpp-metrics.txt,
// b1-de3ff81): running and waiting come through; llama.cpp has no TTFT
// histogram, so no TTFT series at all (absent, not 0).
func TestLlamaCppRealCaptureAbsentIsAbsent(t *testing.T) {
	body := realCapture(t, "llamacpp-metrics.txt")
	_, url := serve(t, model.LlamaCpp, body)
	mon := core.New(core.Options{Endpoints: []string{url}})
	feed(t, mon, model.LlamaCpp, url, url, t0)
	mon.Tick(t0)
	c := New("test")
	c.Publish(Capture(mon))
	_, fams := gather(t, c)

	ep := map[string]string{"endpoint": url, "engine": "llamacpp"}
	if got, want := one(t, fams, "llmtop_requests_running", ep), fixtureSum(t, body, "llamacpp:requests_processing"); got != want {
		t.Errorf("running = %v, capture says %v", got, want)
	}
	if got, want := one(t, fams, "llmtop_requests_waiting", ep), fixtureSum(t, body, "llamacpp:requests_deferred"); got != want {
		t.Errorf("waiting = %v, capture says %v", got, want)
	}
	for _, name := range []string{"llmtop_ttft_seconds", "llmtop_ttft_mean_seconds", "llmtop_ttft_observations", "llmtop_queue_time_seconds"} {
		if vs := find(fams, name, ep); len(vs) != 0 {
			t.Errorf("%s = %v: llama.cpp does not give it: want absent", name, vs)
		}
	}
}

// A hostile engine: a model name carrying terminal escapes and 5000
// characters, an endpoint URL with a password and a token. Nothing secret
// and no control character reaches the output; every label is bounded.
func TestHostileNamesAndCredentialsNeverRaw(t *testing.T) {
	evil := "evil\x1b[2J\x1b]0;pwned\x07" + strings.Repeat("x", 5000)
	body := strings.ReplaceAll(string(enginetest.Fixture("vllm.txt")), enginetest.VLLMModel, evil)
	_, url := serve(t, model.VLLM, []byte(body))
	raw := strings.Replace(url, "http://", "http://admin:hunter2@", 1) + "/?token=tok3nS3cret"
	mon := core.New(core.Options{Endpoints: []string{raw}})
	feed(t, mon, model.VLLM, url, raw, t0)
	mon.Tick(t0)
	c := New("test")
	c.Publish(Capture(mon))
	out, fams := gather(t, c)

	for _, secret := range []string{"hunter2", "tok3nS3cret", "\x1b", "\x07", "pwned\a"} {
		if strings.Contains(out, secret) {
			t.Errorf("the output carries %q", secret)
		}
	}
	n := 0
	for _, mf := range fams {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				n++
				v := l.GetValue()
				if len(v) > MaxLabelLen {
					t.Errorf("%s{%s}: %d bytes, over %d", mf.GetName(), l.GetName(), len(v), MaxLabelLen)
				}
				if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
					t.Errorf("%s{%s=%q}: a control character", mf.GetName(), l.GetName(), v)
				}
			}
		}
	}
	if vs := find(fams, "llmtop_requests_running", nil); len(vs) != 1 {
		t.Fatalf("the hostile endpoint's running series: %d, want 1 (bounded, not dropped)", len(vs))
	}
	if n == 0 {
		t.Fatal("no labels checked")
	}
}

// A KV-full condition opens kv_full: llmtop_finding{…} 1 with its info;
// once it clears the series is gone (absent, not 0).
func TestFindingOpensAndCloses(t *testing.T) {
	body := string(enginetest.Fixture("vllm.txt"))
	full := kvAt(t, body, "0.99")
	f, url := serve(t, model.VLLM, []byte(full))
	cfg := diagnosis.DefaultConfig()
	cfg.MaxHold, cfg.Clear = time.Nanosecond, time.Nanosecond
	mon := core.New(core.Options{Endpoints: []string{url}, Diagnosis: cfg})
	c := New("test")
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Second)
		feed(t, mon, model.VLLM, url, url, at)
		mon.Evaluate(at)
	}
	c.Publish(Capture(mon))
	_, fams := gather(t, c)
	if got := one(t, fams, "llmtop_finding", map[string]string{"endpoint": url, "id": "kv_full", "category": "memory", "severity": "warn"}); got != 1 {
		t.Fatalf("kv_full = %v", got)
	}
	info := fams["llmtop_finding_info"]
	if info == nil || !strings.Contains(labelOf(info.GetMetric()[0], "title"), "KV cache full") || labelOf(info.GetMetric()[0], "action") == "" {
		t.Fatalf("finding info: %v", info)
	}

	f.SetMetrics([]byte(kvAt(t, body, "0.10")))
	for i := 3; i < 6; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		feed(t, mon, model.VLLM, url, url, at)
		mon.Evaluate(at)
	}
	c.Publish(Capture(mon))
	_, fams = gather(t, c)
	if vs := find(fams, "llmtop_finding", map[string]string{"id": "kv_full"}); len(vs) != 0 {
		t.Fatalf("kv_full after KV fell to 10 %%: %v, want absent", vs)
	}
}

func kvAt(t *testing.T, body, v string) string {
	t.Helper()
	const name = `vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} `
	i := strings.Index(body, name)
	if i < 0 {
		t.Fatal("the fixture has no KV line")
	}
	end := i + len(name) + strings.IndexByte(body[i+len(name):], '\n')
	return body[:i] + name + v + body[end:]
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Two findings of one rule on one endpoint (two models) are one series, at
// the higher severity; the title keeps the words it opened with while the
// numbers in it move.
func TestFindingSeriesDedupAndStableTitle(t *testing.T) {
	opened := t0
	mk := func(sev model.Severity, title string) diagnosis.Finding {
		return diagnosis.Finding{ID: "ttft_high", Endpoint: "http://a:8000", Category: diagnosis.Queueing, Severity: sev,
			Title: title, Opened: opened, Actions: []diagnosis.Action{{Change: "--max-num-seqs 48"}}}
	}
	c := New("test")
	c.Publish(&View{Time: t0, Findings: []diagnosis.Finding{mk(model.SevWarn, "TTFT 0.3 s"), mk(model.SevCrit, "TTFT 0.9 s")}})
	_, fams := gather(t, c)
	if vs := find(fams, "llmtop_finding", map[string]string{"id": "ttft_high"}); len(vs) != 1 {
		t.Fatalf("%d series for one rule on one endpoint, want 1", len(vs))
	}
	one(t, fams, "llmtop_finding", map[string]string{"id": "ttft_high", "severity": "crit"})
	first := labelOf(fams["llmtop_finding_info"].GetMetric()[0], "title")

	c.Publish(&View{Time: t0.Add(time.Second), Findings: []diagnosis.Finding{mk(model.SevCrit, "TTFT 1.4 s")}})
	_, fams = gather(t, c)
	if got := labelOf(fams["llmtop_finding_info"].GetMetric()[0], "title"); got != first {
		t.Errorf("title moved from %q to %q while the finding stayed open", first, got)
	}
	opened = t0.Add(time.Minute) // closed and opened again: a new finding, its own title
	c.Publish(&View{Time: t0.Add(2 * time.Minute), Findings: []diagnosis.Finding{mk(model.SevCrit, "TTFT 2.0 s")}})
	_, fams = gather(t, c)
	if got := labelOf(fams["llmtop_finding_info"].GetMetric()[0], "title"); got != "TTFT 2.0 s" {
		t.Errorf("a finding opened again kept the old title %q", got)
	}
}

// An endpoint never scraped has no up series (unknown is not 0); one whose
// newest scrape failed has up 0 and the kind of failure.
func TestEndpointUpUnknownVersusDown(t *testing.T) {
	c := New("test")
	c.Publish(&View{Time: t0, Endpoints: []Endpoint{
		{URL: "http://never:1", State: model.LifeUnknown},
		{URL: "http://down:2", State: model.LifeUnreachable, Scrapes: 3, ErrKind: model.ErrRefused, LastOK: t0.Add(-time.Minute)},
	}})
	_, fams := gather(t, c)
	if vs := find(fams, "llmtop_endpoint_up", map[string]string{"endpoint": "http://never:1"}); len(vs) != 0 {
		t.Errorf("up for a never-scraped endpoint: %v, want absent", vs)
	}
	if got := one(t, fams, "llmtop_endpoint_up", map[string]string{"endpoint": "http://down:2"}); got != 0 {
		t.Errorf("up = %v for a refused endpoint", got)
	}
	one(t, fams, "llmtop_endpoint_scrape_error", map[string]string{"endpoint": "http://down:2", "kind": "refused"})
	if got := one(t, fams, "llmtop_endpoint_last_success_timestamp_seconds", map[string]string{"endpoint": "http://down:2"}); got != float64(t0.Add(-time.Minute).Unix()) {
		t.Errorf("last success = %v", got)
	}
}

// Scrapes while the driving goroutine publishes new views (go test -race
// checks that they share nothing but the atomic pointer).
func TestConcurrentScrapesWhilePublishing(t *testing.T) {
	c := New("test")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			at := t0.Add(time.Duration(i) * time.Second)
			c.Publish(&View{Time: at, Endpoints: []Endpoint{{URL: "http://a:1", Scrapes: i, Up: true, LastOK: at}},
				Findings: []diagnosis.Finding{{ID: "kv_full", Endpoint: "http://a:1", Severity: model.SevWarn, Title: "KV " + at.String(), Opened: t0}}})
		}
	}()
	for range 20 {
		_, fams := gather(t, c)
		if vs := find(fams, "llmtop_finding_info", map[string]string{"title": "KV " + t0.String()}); len(vs) > 1 {
			t.Fatalf("%d info series for one finding", len(vs))
		}
	}
	<-done
}
