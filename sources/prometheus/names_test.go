package prometheus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// olderVLLM serves the names vLLM published before v0.11 (ENGINES.md §8,
// engines.Metrics): gpu_cache_usage_perc, time_per_output_token_seconds
// and the early V1 gpu_prefix_cache_* counters, beside the names that did
// not change. The names are written out, not taken from the table, so a
// table that loses them fails here.
func olderVLLM(e fakeEP) fakeEP {
	e.serves = map[string]bool{}
	for _, n := range []string{
		"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:gpu_cache_usage_perc",
		"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total",
		"vllm:num_preemptions_total", "vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total",
		"vllm:time_to_first_token_seconds", "vllm:time_per_output_token_seconds",
		"vllm:request_time_per_output_token_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
	} {
		e.serves[n] = true
	}
	return e
}

// currentVLLM serves only the names of vLLM v0.11 on.
func currentVLLM(e fakeEP) fakeEP {
	e.serves = map[string]bool{}
	for _, n := range []string{
		"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
		"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total",
		"vllm:num_preemptions_total", "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total",
		"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
		"vllm:request_time_per_output_token_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
	} {
		e.serves[n] = true
	}
	return e
}

func sampleOf(t *testing.T, r Refresh, endpoint string) model.Sample {
	t.Helper()
	for _, m := range r.Msgs {
		if sc, ok := m.(model.Scrape); ok && sc.Endpoint == endpoint && len(sc.Samples) == 1 {
			return sc.Samples[0]
		}
	}
	t.Fatalf("no sample for %s in %d messages", endpoint, len(r.Msgs))
	return model.Sample{}
}

func TestAMixedVLLMFleetIsReadUnderEachReleasesNames(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	f.eps = []fakeEP{olderVLLM(vllmEP(0, "prod", "m", 0.61, 0, 0.2)), currentVLLM(vllmEP(1, "prod", "m", 0.35, 0, 0.2))}
	f.eps[0].values["lat:itl:p99"] = 0.07
	s := newFake(t, f, Config{})
	r := s.Refresh(context.Background(), time.Now())
	if r.Err != "" || r.Targets != 2 || r.Queries != len(families)+2 {
		t.Fatalf("err %q targets %d queries %d", r.Err, r.Targets, r.Queries)
	}
	old, cur := sampleOf(t, r, "http://10.0.0.0:8000"), sampleOf(t, r, "http://10.0.0.1:8000")
	if old.Gauges[model.KVUsage] != 0.61 || cur.Gauges[model.KVUsage] != 0.35 {
		t.Errorf("kv old %v current %v", old.Gauges, cur.Gauges)
	}
	if d := old.Derived.Latency[model.ITL]; !d.P99.OK || d.P99.V != 0.07 {
		t.Errorf("older vLLM's ITL %+v", d)
	}
	if d := cur.Derived.Latency[model.ITL]; !d.P99.OK || d.P99.V != 0.04 {
		t.Errorf("current vLLM's ITL %+v", d)
	}
	if old.Derived.Ratios[model.PrefixHitGauge] != 0.4 || cur.Derived.Ratios[model.PrefixHitGauge] != 0.4 {
		t.Errorf("prefix ratios old %v current %v", old.Derived.Ratios, cur.Derived.Ratios)
	}
	want := map[string][2]string{ // concept: older, current
		string(model.KVUsage):       {"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"},
		string(model.ITL):           {"vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds"},
		string(model.PrefixHits):    {"vllm:gpu_prefix_cache_hits_total", "vllm:prefix_cache_hits_total"},
		string(model.PrefixQueries): {"vllm:gpu_prefix_cache_queries_total", "vllm:prefix_cache_queries_total"},
		string(model.TTFT):          {"vllm:time_to_first_token_seconds", "vllm:time_to_first_token_seconds"},
		string(model.Requests):      {"vllm:request_success_total", "vllm:request_success_total"},
	}
	for c, w := range want {
		if old.From[c] != w[0] || cur.From[c] != w[1] {
			t.Errorf("From[%s]: older %q current %q, want %q and %q", c, old.From[c], cur.From[c], w[0], w[1])
		}
	}
	// Spec decoding is off on both: nothing is read, nothing is cited.
	if n, ok := cur.From[string(model.SpecAcceptTokens)]; ok {
		t.Errorf("spec decoding cited as %q with no series", n)
	}
}

// A release that publishes both names (vLLM 0.10 kept the deprecated one
// beside the new) is read under the newest, whatever order the answer
// comes in.
func TestBothNamesServedReadsTheNewest(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	f.eps = []fakeEP{vllmEP(0, "prod", "m", 0.5, 0, 0.2)} // serves every name
	s := newFake(t, f, Config{})
	sm := sampleOf(t, s.Refresh(context.Background(), time.Now()), "http://10.0.0.0:8000")
	if sm.From[string(model.KVUsage)] != "vllm:kv_cache_usage_perc" || sm.From[string(model.ITL)] != "vllm:inter_token_latency_seconds" {
		t.Errorf("From %v", sm.From)
	}
	if d := sm.Derived.Latency[model.ITL]; d.P99.V != 0.04 || d.Count != 52000 {
		t.Errorf("ITL %+v", d)
	}
}

func TestEveryQueriedNameIsInTheTable(t *testing.T) {
	listed := map[string]bool{}
	for _, sp := range engines.All() {
		rows := sp.Metrics
		for _, m := range rows {
			for _, n := range append(append([]string{}, m.Names...), m.Derived...) {
				listed[n] = true
			}
		}
	}
	extra := map[string]bool{} // TGI's token counts, which the table does not list
	for _, s := range engines.All() {
		if s.Fleet == nil {
			continue
		}
		for _, n := range s.Fleet.Extra {
			extra[strings.TrimSuffix(n, "_sum")] = true // as fakeTerms cuts it
		}
	}
	for _, f := range families {
		b := builder{f: f, window: "5m"}
		q := b.stateQuery() + " or " + b.latencyQuery()
		for _, term := range fakeTerms(q) {
			for _, n := range term.names {
				if !listed[n] && !extra[n] {
					t.Errorf("%s: %s reads %q, which engines.Metrics does not list", f.engine, term.concept, n)
				}
			}
			if term.from != "" && (len(term.names) == 0 || term.names[0] != term.from) {
				t.Errorf("%s: %s tagged as read from %q, reads %v", f.engine, term.concept, term.from, term.names)
			}
		}
		for _, n := range f.present {
			if !strings.Contains(q, n) || !listed[n] {
				t.Errorf("%s: present name %q", f.engine, n)
			}
		}
	}
	// Every older name the table lists for a concept the fleet reads is asked.
	vllm := builder{f: familyOf(model.VLLM), window: "5m"}
	q := vllm.stateQuery() + vllm.latencyQuery()
	for _, n := range []string{"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds_bucket", "vllm:gpu_prefix_cache_queries_total"} {
		if !strings.Contains(q, n) {
			t.Errorf("vLLM queries do not ask %s", n)
		}
	}
}

// The diagnosis cites, for an endpoint read through Prometheus, the metric
// that answered: the older vLLM's KV finding names gpu_cache_usage_perc,
// the current one's kv_cache_usage_perc (before, both cited the bare
// concept).
func TestFindingsCiteTheNameThatAnswered(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	f.eps = []fakeEP{olderVLLM(vllmEP(0, "prod", "m", 0.99, 0, 0.2)), currentVLLM(vllmEP(1, "prod", "m", 0.99, 0, 0.2))}
	for _, e := range f.eps {
		f.up[e.labels["instance"]] = 1
	}
	s := newFake(t, f, Config{})
	mon := core.New(core.Options{Window: 5 * time.Minute})
	r := s.Refresh(context.Background(), time.Now())
	if r.Err != "" || r.Targets != 2 {
		t.Fatalf("err %q targets %d", r.Err, r.Targets)
	}
	for _, m := range r.Msgs {
		mon.Apply(m)
	}
	rep := mon.Evaluate(r.Time)
	// KV ≥ 95 % is a condition forming (held 5m before it opens): its
	// evidence is already written.
	fs := rep.Findings
	for _, p := range rep.Pending {
		fs = append(fs, p.Finding)
	}
	cited := map[string]string{}
	for _, fd := range fs {
		if fd.ID != "kv_full" {
			continue
		}
		for _, ev := range fd.Evidence {
			if strings.HasPrefix(ev.Text, "KV usage") {
				cited[fd.Endpoint] = ev.Source
			}
		}
	}
	if !strings.Contains(cited["http://10.0.0.0:8000"], "vllm:gpu_cache_usage_perc") ||
		!strings.Contains(cited["http://10.0.0.1:8000"], "vllm:kv_cache_usage_perc") {
		t.Errorf("KV evidence cites %v", cited)
	}
}
