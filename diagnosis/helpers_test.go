package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

var t0 = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

const url = "http://127.0.0.1:8000"

// ep builds a healthy vLLM endpoint with metrics; mut changes it.
func ep(mut func(*Endpoint)) Endpoint {
	e := Endpoint{
		URL:      url,
		Identity: model.Identity{Engine: model.VLLM, Version: "0.11.0", Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m", MaxContext: 32768}}},
		Scrape:   model.Scrape{Endpoint: url, Time: t0},
		LastOK:   t0,
		State: model.State{
			Key: model.Key{Endpoint: url, Model: "m"}, Source: model.FromScrape, Time: t0, Samples: 60, Window: time.Minute,
			Running: model.Some(8), Waiting: model.Some(0), KVUsage: model.Some(0.3), RateWindow: time.Minute,
			PromptTPS: model.Some(2000), GenTPS: model.Some(500), RequestsPS: model.Some(2), PreemptionsPS: model.Some(0), Preemptions: model.Some(0),
			Latency: map[model.Latency]model.Dist{
				model.TTFT:    dist(0.05, 0.08, 0.1, 0.06),
				model.ITL:     dist(0.015, 0.02, 0.03, 0.016),
				model.Queue:   dist(0.001, 0.002, 0.003, 0.001),
				model.Prefill: dist(0.04, 0.06, 0.08, 0.05),
			},
			Info: map[string]string{"gpu_memory_utilization": "0.9", "cache_dtype": "auto", "enable_prefix_caching": "True", "block_size": "16"},
		},
	}
	if mut != nil {
		mut(&e)
	}
	return e
}

func dist(p50, p90, p99, mean float64) model.Dist {
	return model.Dist{P50: model.Some(p50), P90: model.Some(p90), P99: model.Some(p99), Mean: model.Some(mean),
		Count: 100, Window: time.Minute, Estimate: true, Exposed: true}
}

func input(eps ...Endpoint) Input { return Input{Time: t0, Endpoints: eps} }

// byID returns the candidate with the given id (any endpoint), or nil.
func byID(rep Report, id string) *Finding {
	for i := range rep.Findings {
		if rep.Findings[i].ID == id {
			return &rep.Findings[i]
		}
	}
	return nil
}

func ids(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

// hasAction reports whether any action's change contains s.
func hasAction(f *Finding, s string) bool {
	for _, a := range f.Actions {
		if strings.Contains(a.Change, s) {
			return true
		}
	}
	return false
}

func hasEvidence(f *Finding, s string) bool {
	for _, e := range f.Evidence {
		if strings.Contains(e.Text, s) {
			return true
		}
	}
	return false
}

// ruleCase is one table row: an input, the finding id expected (or "" for
// none of want's family), and extra checks.
type ruleCase struct {
	name  string
	in    Input
	cfg   func(*Config)
	want  string // id expected
	none  string // id that must be absent
	lacks string // text the report's missing lines must hold
	check func(t *testing.T, f *Finding)
}

func runCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			rep := Evaluate(c.in, cfg)
			if c.lacks != "" && !strings.Contains(strings.Join(rep.Missing, "\n"), c.lacks) {
				t.Errorf("missing %q does not say %q", rep.Missing, c.lacks)
			}
			if c.none != "" {
				if f := byID(rep, c.none); f != nil {
					t.Fatalf("%s present, want absent: %+v", c.none, *f)
				}
			}
			if c.want == "" {
				return
			}
			f := byID(rep, c.want)
			if f == nil {
				t.Fatalf("%s absent; got %v", c.want, ids(rep.Findings))
			}
			if len(f.Evidence) == 0 || f.Cause == "" || f.Title == "" {
				t.Errorf("%s incomplete: %+v", c.want, *f)
			}
			for _, a := range f.Actions {
				if a.Change == "" || a.Why == "" || a.TradeOff == "" {
					t.Errorf("%s: incomplete action %+v", c.want, a)
				}
			}
			if c.check != nil {
				c.check(t, f)
			}
		})
	}
}
