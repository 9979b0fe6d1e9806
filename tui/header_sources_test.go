package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Issue 31 item 24: the header says that the session is being recorded
// (and into which file, and when the recorder failed), and which
// Prometheus the endpoints are read through.
func TestHeaderNamesRecordingAndPrometheus(t *testing.T) {
	m := New(Options{Now: t0, NoColor: true, Endpoints: []string{"http://127.0.0.1:8000"},
		Recording: "/var/lib/llmtop/run-20261126.llmrec", Prometheus: "http://prom:9090"})
	for _, s := range scrapes(3, healthy) {
		m.Update(s)
	}
	head := strings.Join(strings.SplitN(screen(t, m, 120, 40), "\n", 3)[:2], "\n")
	for _, want := range []string{" REC ", "recording to run-20261126.llmrec", "via Prometheus http://prom:9090"} {
		if !strings.Contains(head, want) {
			t.Errorf("header lacks %q:\n%s", want, head)
		}
	}
	m.Update(SourceStatusMsg{Name: "record", Err: "write run.llmrec: no space left on device"})
	if head := strings.SplitN(screen(t, m, 120, 40), "\n", 2)[0]; !strings.Contains(head, "REC FAILED") {
		t.Errorf("a failed recorder is not said:\n%s", head)
	}
	plain := New(Options{Now: t0, NoColor: true, Endpoints: []string{"http://127.0.0.1:8000"}})
	if head := strings.SplitN(screen(t, plain, 120, 40), "\n", 3); strings.Contains(head[0]+head[1], "REC") || strings.Contains(head[1], "Prometheus") {
		t.Errorf("a session neither recorded nor through Prometheus says so:\n%s", head[0]+"\n"+head[1])
	}
}

// Issue 31 item 27: llama-server publishes no process start time, so the
// header said "up --" for an engine on this machine whose start /proc
// knows (the process holding its port).
func TestUptimeFromTheProcessHoldingThePort(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(3, healthy) {
		s.Samples[0].Started = time.Time{}
		m.Update(s)
	}
	if head := strings.SplitN(screen(t, m, 120, 40), "\n", 2)[0]; !strings.Contains(head, "up --") {
		t.Fatalf("fixture: the scrapes say a start time:\n%s", head)
	}
	m.Update(model.PortOwner{Endpoint: m.d.Endpoints()[0], Time: t0.Add(3 * time.Second), Port: 8000, PID: 4711,
		Cmdline: "llama-server -m m.gguf -c 2048 -np 2", Started: t0.Add(-5 * time.Minute)})
	if head := strings.SplitN(screen(t, m, 120, 40), "\n", 2)[0]; !strings.Contains(head, "up 5m") {
		t.Errorf("uptime from /proc not shown:\n%s", head)
	}
}

// A real Ollama whose keep-alive had expired (/api/ps empty) was shown as
// "model tiny:latest · ctx --", the same name as when loaded: the header
// says the model is not loaded (its next request pays the load).
func TestHeaderSaysAnOllamaModelIsNotLoaded(t *testing.T) {
	m := New(Options{Now: t0, NoColor: true, Endpoints: []string{testURL}})
	ss := scrapes(3, healthy)
	for i := range ss {
		ss[i].Identity.Engine, ss[i].Identity.Version = model.Ollama, "0.17.4"
		ss[i].Identity.Models = []model.ModelInfo{{ID: "tiny:latest", Extra: map[string]string{"loaded": "false"}}}
		for j := range ss[i].Samples {
			ss[i].Samples[j].Model = "tiny:latest"
		}
		m.Update(ss[i])
	}
	head := strings.SplitN(screen(t, m, 200, 50), "\n", 2)[0]
	if !strings.Contains(head, "model tiny:latest (not loaded)") {
		t.Fatalf("header %q", head)
	}
	loaded := scrapes(4, healthy)[3]
	loaded.Identity.Engine = model.Ollama
	loaded.Identity.Models = []model.ModelInfo{{ID: "tiny:latest", MaxContext: 4096, Extra: map[string]string{"loaded": "true"}}}
	for j := range loaded.Samples {
		loaded.Samples[j].Model = "tiny:latest"
	}
	m.Update(loaded)
	if head := strings.SplitN(screen(t, m, 200, 50), "\n", 2)[0]; strings.Contains(head, "not loaded") || !strings.Contains(head, "ctx 4096") {
		t.Fatalf("loaded: header %q", head)
	}
}
