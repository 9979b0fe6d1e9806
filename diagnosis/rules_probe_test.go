package diagnosis

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// loadProbe reads the behaviour part of a real `llmtop probe --json`
// capture (testdata/probe/README.md says where each came from).
func loadProbe(t *testing.T, name string) model.Behaviour {
	t.Helper()
	raw, err := os.ReadFile("testdata/probe/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Behaviour *model.Behaviour `json:"behaviour"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Behaviour == nil {
		t.Fatalf("%s: %v", name, err)
	}
	return *doc.Behaviour
}

func probeIDs(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	sort.Strings(out)
	return out
}

// The real engines' tiny random models: deterministic at temperature 0,
// a chatml template with its markers, answers that run to max_tokens; the
// judgment says exactly that, with each engine's own levers.
func TestProbeFindingsOnRealCaptures(t *testing.T) {
	cases := []struct {
		file, engine string
		want         []string
		lever        string // a word every runs-to-length action list must hold
		notChecked   []string
	}{
		{"llamacpp-b1-de3ff81.json", "llamacpp",
			[]string{"probe_repetition", "probe_runs_to_length", "probe_tokenizer", "probe_tokenizer_cjk", "probe_tokenizer_typographic"},
			"--jinja", nil},
		{"ollama-0.17.4.json", "ollama", []string{"probe_repetition", "probe_runs_to_length"}, "PARAMETER stop",
			[]string{"chat vs completions: Ollama does not show the prompt it renders", "tokenization: Ollama has no tokenize route"}},
	}
	for _, c := range cases {
		t.Run(c.engine, func(t *testing.T) {
			b := loadProbe(t, c.file)
			fs := ProbeFindings(b)
			if got := probeIDs(fs); strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("findings %v, want %v", got, c.want)
			}
			for _, f := range fs {
				if f.Category != Behaviour || len(f.Evidence) == 0 || len(f.Actions) == 0 || f.Endpoint != b.Endpoint {
					t.Errorf("%s: %+v", f.ID, f)
				}
				if f.ID == "probe_runs_to_length" {
					var acts []string
					for _, a := range f.Actions {
						acts = append(acts, a.Change)
					}
					if !strings.Contains(strings.Join(acts, " | "), c.lever) {
						t.Errorf("%s actions %q: want %s", c.engine, acts, c.lever)
					}
					if !strings.Contains(f.Evidence[1].Text, "<|im_end|>") {
						t.Errorf("evidence %q: want the stop token the engine applies", f.Evidence[1].Text)
					}
				}
			}
			if got := ProbeNotChecked(b); strings.Join(got, ",") != strings.Join(c.notChecked, ",") {
				t.Errorf("not checked %q, want %q", got, c.notChecked)
			}
		})
	}
}

// What the real captures cannot show: a chat template without its markers,
// two answers that differ, the routes disagreeing, a partial probe.
func TestProbeFindingsBroken(t *testing.T) {
	b := loadProbe(t, "llamacpp-b1-de3ff81.json")
	b.Determinism.Identical, b.Determinism.DivergeChar, b.Determinism.DivergeToken = false, 12, model.Some(3)
	b.Determinism.A, b.Determinism.B = "…the sea is calm", "…the sea is wild"
	b.Template.Rendered, b.Template.Special = "Write one short sentence about the sea.\n", false
	b.Template.SameAnswer, b.Template.ChatAnswer, b.Template.CompletionAnswer = false, "a", "b"
	b.Partial = "stopped before the stop check"
	fs := ProbeFindings(b)
	byID := map[string]Finding{}
	for _, f := range fs {
		byID[f.ID] = f
	}
	for id, want := range map[string]string{
		"probe_nondeterministic": "byte 12, token 3",
		"probe_template":         "chatml's <|im_start|> <|im_end|>",
		"probe_route_mismatch":   "differently",
		"probe_partial":          "stopped early",
	} {
		f, ok := byID[id]
		if !ok {
			t.Errorf("%s missing from %v", id, probeIDs(fs))
			continue
		}
		if !strings.Contains(f.Title, want) {
			t.Errorf("%s title %q: want %q", id, f.Title, want)
		}
	}
	if a := byID["probe_template"].Actions; len(a) != 1 || !strings.Contains(a[0].Change, "--jinja") {
		t.Errorf("llama.cpp template action %+v", a)
	}
	// An unknown engine gets every engine's lever, each named.
	b.Engine = model.Unknown
	for _, f := range ProbeFindings(b) {
		if f.ID == "probe_template" && len(f.Actions) < 5 {
			t.Errorf("unknown engine: %d actions", len(f.Actions))
		}
	}
}

// A check that did not run raises nothing and says why.
func TestProbeNotCheckedIsNotFine(t *testing.T) {
	b := model.Behaviour{Endpoint: "http://x", Engine: model.SGLang,
		Determinism: model.Determinism{NotChecked: "not checked: /v1/chat/completions failed: no answer within 8s"},
		Template:    model.Template{NotChecked: "not checked: SGLang has no route that renders its chat template", CompareNotChecked: "not checked: the chat route did not answer"},
		Tokens:      model.Tokenization{NotChecked: "not checked: SGLang has no tokenize route"},
		Stop:        model.StopCheck{NotChecked: "not checked: /v1/chat/completions failed: no answer within 8s"},
		Repetition:  model.Repetition{NotChecked: "not checked: no answer to measure"}}
	if fs := ProbeFindings(b); len(fs) != 0 {
		t.Errorf("findings from checks that did not run: %v", probeIDs(fs))
	}
	nc := ProbeNotChecked(b)
	if len(nc) != 6 || !strings.HasPrefix(nc[1], "chat template: SGLang has no route") {
		t.Errorf("not checked %q", nc)
	}
}

// A run whose probe shows another template, tokenizer or set of defaults
// than the run before names it as a change in the restart's comparison;
// unknown on either side is no change.
func TestCompareRunsNamesBehaviourChange(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a := model.Run{N: 1, Started: t0, Behaviour: &model.Behaviour{Identity: model.Fingerprint{TemplateHash: "aaa", TokenizerHash: "ttt", GenConfigHash: "g1"}}}
	b := model.Run{N: 2, Started: t0.Add(time.Hour), Behaviour: &model.Behaviour{Identity: model.Fingerprint{TemplateHash: "bbb", TokenizerHash: "ttt"}}}
	c := CompareRuns(a, b, DefaultConfig())
	if len(c.Config) != 1 || c.Config[0] != "chat template aaa → bbb (behaviour probe)" {
		t.Errorf("config diff %q", c.Config)
	}
	b.Behaviour = nil
	if c := CompareRuns(a, b, DefaultConfig()); len(c.Config) != 0 {
		t.Errorf("an unprobed run compared: %q", c.Config)
	}
}

// The rule reads the current run's probe, and only it.
func TestRuleProbeReadsCurrentRun(t *testing.T) {
	b := loadProbe(t, "ollama-0.17.4.json")
	t0 := b.Time
	in := Input{Time: t0.Add(time.Second), Endpoints: []Endpoint{{URL: b.Endpoint, Runs: []model.Run{{N: 1, Started: t0.Add(-time.Hour), Behaviour: &b}}}}}
	rep := Evaluate(in, DefaultConfig())
	got := probeIDs(rep.Findings)
	if strings.Join(got, ",") != "probe_repetition,probe_runs_to_length" {
		t.Errorf("findings %v", got)
	}
	missing := strings.Join(rep.Missing, "\n")
	if !strings.Contains(missing, "behaviour probe: tokenization: Ollama has no tokenize route") {
		t.Errorf("missing %q: want the checks the probe could not run", missing)
	}
	in.Endpoints[0].Runs = append(in.Endpoints[0].Runs, model.Run{N: 2, Started: t0})
	for _, f := range Evaluate(in, DefaultConfig()).Findings {
		if strings.HasPrefix(f.ID, "probe_") {
			t.Errorf("a new run carries the old run's probe finding %s", f.ID)
		}
	}
}
