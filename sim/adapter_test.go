package sim

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	enginesrc "github.com/llmtop/llmtop/sources/engine"
)

// llmtop's own vLLM adapter reads the sim exactly as a vLLM, and every
// number it gets matches the sim's books.
func TestAdapterReadsSimAsVLLM(t *testing.T) {
	s := newDriven(t, Config{Scenario: KVPressure, Background: true, Seed: 7})
	advance(t, s, 90*time.Second)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	sc := enginesrc.ScrapeOnce(context.Background(), enginesrc.Config{URL: srv.URL})
	if !sc.OK() {
		t.Fatalf("scrape failed: %s (%s) %s", sc.Err, sc.ErrKind, sc.Hint)
	}
	id := sc.Identity
	if id.Engine != model.VLLM || id.Version != Version || id.Health != model.HealthUp {
		t.Errorf("identity %+v", id)
	}
	s.mu.Lock()
	e := s.eng
	want := struct {
		running, waiting int
		kv               float64
		tl               tally
		blocks, tokens   int
		maxLen           int
	}{len(e.running), e.waitq.Len(), e.kv.usage(), e.tally, s.plan.numBlocks, s.plan.tokens, s.cfg.maxModelLen}
	s.mu.Unlock()
	if len(id.Models) != 1 || id.Models[0].ID != "meta-llama/Llama-3.1-8B-Instruct" || id.Models[0].MaxContext != want.maxLen {
		t.Errorf("models %+v, want max context %d", id.Models, want.maxLen)
	}
	if len(sc.Samples) != 1 {
		t.Fatalf("%d samples", len(sc.Samples))
	}
	smp := sc.Samples[0]
	gauges := map[model.Gauge]float64{
		model.Running: float64(want.running), model.Waiting: float64(want.waiting),
		model.KVUsage: want.kv, model.KVCapacityTokens: float64(want.tokens),
	}
	for g, v := range gauges {
		if got, ok := smp.Gauges[g]; !ok || got != v {
			t.Errorf("gauge %s = %v (present %v), sim has %v", g, got, ok, v)
		}
	}
	finished := 0
	for _, n := range want.tl.finished {
		finished += n
	}
	counters := map[model.Counter]float64{
		model.PromptTokens: float64(want.tl.prompt), model.GenTokens: float64(want.tl.gen),
		model.Preemptions: float64(want.tl.preempt), model.PrefixQueries: float64(want.tl.prefixQ),
		model.PrefixHits: float64(want.tl.prefixH), model.Requests: float64(finished),
	}
	for c, v := range counters {
		if got, ok := smp.Counters[c]; !ok || got != v {
			t.Errorf("counter %s = %v (present %v), sim has %v", c, got, ok, v)
		}
	}
	for reason, n := range want.tl.finished {
		if smp.FinishReasons[reason] != float64(n) {
			t.Errorf("finished %s = %v, sim has %d", reason, smp.FinishReasons[reason], n)
		}
	}
	if h := smp.Latencies[model.TTFT]; h.Count != float64(want.tl.firstTokens) {
		t.Errorf("TTFT count %v, sim emitted %d first tokens", h.Count, want.tl.firstTokens)
	}
	if h := smp.Latencies[model.ITL]; h.Count != float64(want.tl.gaps) {
		t.Errorf("ITL count %v, sim emitted %d gaps", h.Count, want.tl.gaps)
	}
	if smp.Info["num_gpu_blocks"] != strconv.Itoa(want.blocks) || smp.Info["block_size"] != "16" {
		t.Errorf("info %v, want num_gpu_blocks %d", smp.Info, want.blocks)
	}
	if want.tl.preempt == 0 || want.kv < 0.5 {
		t.Errorf("the scrape should come from a loaded engine: preemptions %d, KV %.2f", want.tl.preempt, want.kv)
	}
}

// Every fault reads as the adapter's classified error, not as data.
func TestAdapterSeesBrokenMetrics(t *testing.T) {
	s := newDriven(t, Config{Scenario: MetricsBroken, Background: true, Seed: 8})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, want := range []model.ScrapeErrKind{model.ErrNotFound, model.ErrServer, model.ErrMalformed} {
		advance(t, s, 5*time.Second)
		sc := enginesrc.ScrapeOnce(context.Background(), enginesrc.Config{URL: srv.URL, Engine: model.VLLM})
		if sc.ErrKind != want {
			t.Errorf("scrape error kind %q (%s), want %q", sc.ErrKind, sc.Err, want)
		}
		advance(t, s, 10*time.Second)
	}
	advance(t, s, 15*time.Second) // the cycle starts again with 404
}
