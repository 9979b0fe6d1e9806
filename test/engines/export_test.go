//go:build engines

package engines

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// startExport runs `llmtop export` on the URLs and returns its /metrics
// URL; the process ends with the test.
func startExport(t *testing.T, urls ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"export", "--listen", "127.0.0.1:0", "--no-gpu", "--interval", "1s", "--timeout", "10s"}, urls...)
	cmd := exec.CommandContext(ctx, llmtopBin(t), args...)
	cmd.Env = append(cmd.Environ(), "NO_COLOR=1", "HOME="+workDir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/metrics`)
		for sc.Scan() {
			if m := re.FindString(sc.Text()); m != "" {
				addr <- m
			}
		}
		close(addr)
	}()
	select {
	case u, ok := <-addr:
		if !ok {
			t.Fatal("llmtop export ended without serving")
		}
		return u
	case <-time.After(15 * time.Second):
		t.Fatal("llmtop export printed no address in 15 s")
	}
	return ""
}

// exportedOnce waits until the export serves a series of name for every
// one of n endpoints has been scraped (llmtop_endpoint_up), and returns the
// parsed families.
func exportedOnce(t *testing.T, url, name string, n int) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			p := expfmt.NewTextParser(pmodel.UTF8Validation)
			fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
			if err != nil {
				t.Fatalf("llmtop export's /metrics does not parse: %v", err)
			}
			if fams[name] != nil && len(fams["llmtop_endpoint_up"].GetMetric()) == n {
				return fams
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s from llmtop export in 30 s", name)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// llmtop export against the real llama-server and Ollama: the identity
// each engine states about itself, its own numbers, and no series for what
// the engine does not expose (absent, not 0).
func TestExportRealEngines(t *testing.T) {
	ls, ol := llama(t), ollama(t)
	url := startExport(t, ls.URL, ol.URL)
	fams := exportedOnce(t, url, "llmtop_requests_running", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var props llamaProps
	if err := getJSON(ctx, ls.URL+"/props", &props); err != nil {
		t.Fatal(err)
	}
	raw, _ := rawMetrics(t, ctx, ls)

	info := map[string]map[string]string{}
	for _, m := range fams["llmtop_endpoint_info"].GetMetric() {
		l := labels(m)
		info[l["endpoint"]] = l
	}
	if l := info[ls.URL]; l["engine"] != "llamacpp" || l["version"] != props.BuildInfo {
		t.Errorf("llama-server's info %v; it says build_info %q", l, props.BuildInfo)
	}
	if l := info[ol.URL]; l["engine"] != "ollama" {
		t.Errorf("Ollama's info %v", l)
	}
	running := map[string]float64{}
	for _, m := range fams["llmtop_requests_running"].GetMetric() {
		running[labels(m)["endpoint"]] = m.GetGauge().GetValue()
	}
	if v, ok := running[ls.URL]; !ok || v != raw["llamacpp:requests_processing"] {
		t.Errorf("llama-server running %v (present %v); its /metrics says %v", v, ok, raw["llamacpp:requests_processing"])
	}
	if _, ok := running[ol.URL]; ok {
		t.Errorf("Ollama has no running-requests metric, yet llmtop_requests_running has it")
	}
	for _, m := range fams["llmtop_kv_cache_capacity_tokens"].GetMetric() {
		if l := labels(m); l["endpoint"] == ls.URL && m.GetGauge().GetValue() != llamaCtx {
			t.Errorf("llama-server KV capacity %v, want its -c %d", m.GetGauge().GetValue(), llamaCtx)
		}
	}
	for _, name := range []string{"llmtop_ttft_seconds", "llmtop_itl_seconds", "llmtop_queue_time_seconds"} {
		for _, m := range fams[name].GetMetric() {
			if e := labels(m)["endpoint"]; e == ls.URL || e == ol.URL {
				t.Errorf("%s for %s: neither engine exposes it", name, e)
			}
		}
	}
	for _, m := range fams["llmtop_endpoint_up"].GetMetric() {
		if m.GetGauge().GetValue() != 1 {
			t.Errorf("up %v for %v", m.GetGauge().GetValue(), labels(m))
		}
	}
}
