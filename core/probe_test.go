package core

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func probed(t time.Time, template string, finish string) model.Behaviour {
	return model.Behaviour{Endpoint: url, Time: t, Engine: model.VLLM,
		Identity:    model.Fingerprint{Model: "m", TemplateHash: template, TokenizerHash: "tok1"},
		Determinism: model.Determinism{Identical: true},
		Template:    model.Template{Route: "/tokenize (messages) + /detokenize", Rendered: "<|im_start|>user", Special: true},
		Tokens:      model.Tokenization{NotChecked: "not checked: x"},
		Stop:        model.StopCheck{MaxTokens: 256, Finish: finish},
		Repetition:  model.Repetition{NotChecked: "not checked: x"},
		Raw:         []model.Exchange{{Check: "stop", Route: "/v1/chat/completions", Response: "{}"}}}
}

// A probe is filed under the run it probed (without its raw exchanges),
// its findings open at once in the behaviour category, and when the next
// run's probe shows another template, the restart names it.
func TestProbeIsKeptWithItsRunAndComparedAcrossRuns(t *testing.T) {
	m := newMonitor()
	run(m, newEngine("0.11.0", time.Time{}, 0.02), 0, 20, 5, 100)
	m.Apply(probed(at(20), "tmplA", "length"))
	m.Tick(at(21))
	runs := m.RunsOf(url)
	if len(runs) != 1 || runs[0].Behaviour == nil || runs[0].Behaviour.Identity.TemplateHash != "tmplA" || runs[0].Behaviour.Raw != nil {
		t.Fatalf("runs = %+v", runs)
	}
	if ids := findingIDs(m.Report().Findings); !strings.Contains(ids, "probe_runs_to_length:warn") {
		t.Fatalf("findings %s: want the probe's", ids)
	}
	// Restart (counters reset), probe again with another template.
	for s := 22.0; s < 24; s++ {
		m.Apply(down(at(s)))
	}
	run(m, newEngine("0.11.0", time.Time{}, 0.02), 24, 10, 5, 100)
	m.Apply(probed(at(34), "tmplB", "stop"))
	m.Tick(at(35))
	runs = m.RunsOf(url)
	if len(runs) != 2 || runs[1].Behaviour == nil || runs[0].Behaviour.Identity.TemplateHash != "tmplA" {
		t.Fatalf("runs = %+v", runs)
	}
	var restart string
	for _, f := range m.Report().Findings {
		if f.ID == "restarts" {
			for _, e := range f.Evidence {
				restart += e.Text + "\n"
			}
		}
		if f.ID == "probe_runs_to_length" && f.Active() {
			t.Errorf("the first run's probe finding is still open after the restart and a clean probe")
		}
	}
	if !strings.Contains(restart, "changed: chat template tmplA → tmplB (behaviour probe)") {
		t.Errorf("restart evidence %q: want the template change", restart)
	}
}

// A probe of an endpoint the core has never seen is dropped, not filed
// somewhere else.
func TestProbeOfUnknownEndpointIsIgnored(t *testing.T) {
	m := newMonitor()
	run(m, newEngine("0.11.0", time.Time{}, 0.02), 0, 5, 5, 100)
	b := probed(at(5), "x", "length")
	b.Endpoint = "http://elsewhere:1"
	m.Apply(b)
	if r := m.RunsOf(url); r[0].Behaviour != nil {
		t.Errorf("filed under %s: %+v", url, r[0].Behaviour)
	}
}

// vLLM serves its generation-config defaults only in its log: with the log
// attached, the probe's run gets them from the start-up line (the line as
// vllm/entrypoints/openai/serving_chat.py logs it), and a restart whose
// defaults changed names that.
func TestProbeTakesVLLMDefaultsFromTheLog(t *testing.T) {
	m := newMonitor()
	line := func(at time.Time, dict string) model.LogLine {
		return model.LogLine{Time: at, Text: "(APIServer pid=460954) INFO 12-18 06:01:05 [serving_chat.py:130] Using default chat sampling params from model: " + dict}
	}
	m.Apply(model.LogLines(banner(at(-5), "{'model': 'Qwen/Qwen3-8B'}")))
	m.Apply(line(at(-4), "{'temperature': 0.6, 'top_p': 0.95}"))
	run(m, newEngine("0.11.0", time.Time{}, 0.02), 0, 10, 5, 100)
	m.Apply(probed(at(10), "t", "stop"))
	r := m.RunsOf(url)[0]
	if r.Behaviour == nil || r.Behaviour.Stop.Defaults["temperature"] != "0.6" || r.Behaviour.Stop.Defaults["top_p"] != "0.95" ||
		!strings.Contains(r.Behaviour.Stop.DefaultsFrom, "the engine's log: Using default chat sampling params from model") || r.Behaviour.Identity.GenConfigHash == "" {
		t.Fatalf("run 1 behaviour %+v", r.Behaviour)
	}
	m.Apply(model.LogLines(shutdown(at(11))))
	for s := 12.0; s < 14; s++ {
		m.Apply(down(at(s)))
	}
	m.Apply(model.LogLines(banner(at(14), "{'model': 'Qwen/Qwen3-8B'}")))
	m.Apply(line(at(14), "{'temperature': 0.7, 'top_p': 0.8, 'top_k': 20}"))
	run(m, newEngine("0.11.0", time.Time{}, 0.02), 15, 10, 5, 100)
	m.Apply(probed(at(25), "t", "stop"))
	m.Tick(at(26))
	runs := m.RunsOf(url)
	if len(runs) != 2 || runs[1].Behaviour == nil || runs[1].Behaviour.Stop.Defaults["top_k"] != "20" {
		t.Fatalf("runs %+v", runs)
	}
	found := false
	for _, f := range m.Report().Findings {
		for _, e := range f.Evidence {
			found = found || (f.ID == "restarts" && strings.HasPrefix(e.Text, "changed: generation defaults "))
		}
	}
	if !found {
		t.Errorf("the restart does not name the changed generation defaults: %s", findingIDs(m.Report().Findings))
	}
}
