package engine

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// The files in testdata/engines were recorded from a real llama-server
// (build b1-de3ff81, started with --metrics -np 2 -c 8192) under load: 2
// slots busy, 1 request deferred. /metrics carries its provenance as three
// "#" comment lines, which Prometheus text allows and parseProm skips like
// the comment header of sources/engine/testdata/llamacpp.txt: the files are
// fed as recorded.
func realEngineFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "engines", name))
	if err != nil {
		t.Fatalf("real engine recording missing: %v", err)
	}
	return b
}

const (
	realLlamaMetrics = "llamacpp-metrics.txt"
	realLlamaSlots   = "llamacpp-b1-de3ff81-slots-busy.json"
)

// /metrics alone, through the same mapping a scrape uses.
func TestRealLlamaCppMetrics(t *testing.T) {
	body := realEngineFile(t, realLlamaMetrics)
	if !strings.HasPrefix(string(body), "# recorded by test/engines") {
		t.Fatalf("%s lost its provenance header", realLlamaMetrics)
	}
	s := only(t, mapLlamaCpp(mustParse(t, body), testMeta("llmtop-small")))
	want{
		gauges: map[model.Gauge]float64{
			model.Running:        2, // llamacpp:requests_processing 2
			model.Waiting:        1, // llamacpp:requests_deferred 1
			model.PromptTPSGauge: 4548.47,
			model.GenTPSGauge:    0,    // predicted_tokens_seconds 0: the engine says 0 (no request finished yet)
			model.BatchPerStep:   1.98, // n_busy_slots_per_decode (issue 14 item 21)
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: 48, // 2 requests × 24 prompt tokens, none cached
			model.GenTokens:    0,  // tokens_predicted_total moves only when a request ends
			// Hit ratio = cached / (computed + cached) = 0 / (48 + 0).
			model.PrefixHits: 0, model.PrefixQueries: 48,
			model.SpecDraftTokens: 0, model.SpecAcceptTokens: 0,
		},
		// Not in llama.cpp's /metrics: left out, never 0. KV usage, its
		// capacity and the slot count come from /slots (below); the
		// requests_deferred value is Waiting itself, not a Deferred part.
		absentG: []model.Gauge{model.KVUsage, model.KVCapacityTokens, model.MaxRunning, model.Deferred,
			model.PrefixHitGauge, model.SpecAcceptGauge},
		absentC: []model.Counter{model.Requests, model.Preemptions, model.RequestErrors},
		absentL: []model.Latency{model.TTFT, model.ITL, model.E2E, model.Queue, model.Prefill, model.Decode},
	}.check(t, s)
	// TPOT is the aggregate mean tokens_predicted_seconds_total ÷
	// tokens_predicted_total = 0 s / 0 tokens here: present, empty, labelled.
	tpot, ok := s.Latencies[model.TPOT]
	if !ok || tpot.Sum != 0 || tpot.Count != 0 || len(tpot.Buckets) != 0 || tpot.Approx != llamaTPOTApprox {
		t.Errorf("TPOT = %+v (present %v), want mean-only 0 s / 0 tokens, labelled", tpot, ok)
	}
	for _, n := range s.Notes {
		if n == llamaPrecision {
			t.Errorf("precision note with every counter under 999999: %v", s.Counters)
		}
	}
}

// /slots of the same moment. This build writes next_token as an array and
// counts the generated tokens in n_prompt_tokens already: slot 0 holds
// n_prompt_tokens 81 = 24 prompt (n_prompt_tokens_processed) + 57
// n_decoded, slot 1 82 = 24 + 58. Held context is n_prompt_tokens alone.
func TestRealLlamaCppSlots(t *testing.T) {
	slots := parseSlots(realEngineFile(t, realLlamaSlots))
	if len(slots) != 2 {
		t.Fatalf("%d slots, want 2 (-np 2)", len(slots))
	}
	for i, want := range []struct{ held, decoded float64 }{{81, 57}, {82, 58}} {
		if h := slots[i].held(); h != want.held {
			t.Errorf("slot %d holds %v tokens, want n_prompt_tokens %v (n_decoded is in it already)", i, h, want.held)
		}
		if d, ok := slots[i].decoded(); !ok || d != want.decoded {
			t.Errorf("slot %d n_decoded = %v (%v), want %v from next_token[0]", i, d, ok, want.decoded)
		}
	}
	if sum, known := decodedInFlight(slots); !known || sum != 57+58 {
		t.Errorf("in-flight decoded = %v (%v), want 115", sum, known)
	}
	s := model.NewSample("e", "m", t0, model.FromScrape)
	applySlots(&s, slots)
	want{gauges: map[model.Gauge]float64{
		// (81 + 82) / (4096 + 4096) = 163 / 8192 ≈ 0.0199
		model.KVUsage: 163.0 / 8192, model.KVCapacityTokens: 8192, model.MaxRunning: 2,
		model.Running: 2, // both slots is_processing (no /metrics here to win)
	}}.check(t, s)
	if s.Info["slots"] != "2" {
		t.Errorf("info slots = %q", s.Info["slots"])
	}
}

// The whole scrape, as production runs it: an HTTP server answering
// /metrics and /slots with the recordings (identity routes from the
// llama.cpp fake, whose /props says 4 slots: the 2 /slots entries win).
func TestRealLlamaCppScrape(t *testing.T) {
	metrics, slots := realEngineFile(t, realLlamaMetrics), realEngineFile(t, realLlamaSlots)
	mux := http.NewServeMux()
	mux.Handle("/", enginetest.New(model.LlamaCpp))
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(metrics)
	})
	mux.HandleFunc("/slots", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(slots)
	})
	sc := newSession(Config{URL: serve(t, mux), Engine: model.LlamaCpp}).scrape(context.Background())
	if !sc.OK() {
		t.Fatalf("scrape failed: %s (%s) %s", sc.Err, sc.ErrKind, sc.Hint)
	}
	s := only(t, sc.Samples)
	want{
		gauges: map[model.Gauge]float64{
			model.Running: 2, model.Waiting: 1, model.PromptTPSGauge: 4548.47, model.GenTPSGauge: 0,
			model.KVUsage: 163.0 / 8192, model.KVCapacityTokens: 8192,
			model.MaxRunning: 2, // the slot count is the concurrency cap
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: 48, model.PrefixHits: 0, model.PrefixQueries: 48,
			// tokens_predicted_total 0 + busy slots' n_decoded 57 + 58
			model.GenTokens: 115,
		},
		absentG: []model.Gauge{model.Deferred, model.PrefixHitGauge},
		absentC: []model.Counter{model.Requests, model.Preemptions, model.RequestErrors},
		absentL: []model.Latency{model.TTFT, model.ITL, model.E2E, model.Queue},
	}.check(t, s)
	// TPOT stays over the engine's own finished tokens (0), not the 115.
	if tpot := s.Latencies[model.TPOT]; tpot.Count != 0 || tpot.Sum != 0 {
		t.Errorf("TPOT = %+v, want 0 s / 0 finished tokens", tpot)
	}
	notes := strings.Join(s.Notes, "|")
	if !strings.Contains(notes, llamaKVNote) || !strings.Contains(notes, llamaGenNote) {
		t.Errorf("notes %q lack the /slots KV and in-flight generation notes", s.Notes)
	}
}

// Ollama 0.17.4's /api/ps after a request, on a CPU-only host: size_vram 0
// of size 1308544, context_length 4096. Ollama has no /metrics (404): the
// sample carries facts in Info and no concept at all.
func TestRealOllamaAPIPS(t *testing.T) {
	ps := realEngineFile(t, "ollama-0.17.4-api-ps.json")
	mux := http.NewServeMux()
	mux.HandleFunc("/api/ps", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(ps)
	})
	mux.Handle("/api/tags", status(http.StatusNotFound)) // the catalogue is optional
	c := &collector{s: newSession(Config{URL: serve(t, mux)}), now: t0, id: &model.Identity{Engine: model.Ollama}}
	c.ctx = t.Context()
	ss, err := collectOllama(c)
	if err != nil {
		t.Fatal(err)
	}
	s := only(t, ss)
	if s.Model != "tiny:latest" || len(s.Gauges)+len(s.Counters)+len(s.Latencies) != 0 {
		t.Errorf("sample = %+v: Ollama exposes no concept, none may be set (not even 0)", s)
	}
	for k, v := range map[string]string{
		"size": "1308544", "size_vram": "0", "vram_ratio": "0.000", "context_length": "4096",
		"expires_at": "2026-11-22T05:17:44.85268193Z", "family": "llama", "parameter_size": "161K", "quantization": "F16",
	} {
		if s.Info[k] != v {
			t.Errorf("info %s = %q, want %q", k, s.Info[k], v)
		}
	}
	notes := strings.Join(s.Notes, "|")
	if !strings.Contains(notes, ollamaCPUNote) || strings.Contains(notes, ollamaOffloadNote) {
		t.Errorf("notes %q: size_vram 0 is a CPU host, not an offload", s.Notes)
	}
	if len(c.id.Models) != 1 || c.id.Models[0].MaxContext != 4096 {
		t.Errorf("models = %+v, want tiny:latest with context 4096", c.id.Models)
	}
}
