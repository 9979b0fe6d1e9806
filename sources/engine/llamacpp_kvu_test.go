package engine

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Real /slots answers of llama-server b1-de3ff81 (llama.cpp from node-llama-cpp 3.22.1), recorded
// 2026-11-24 on this repository's test model (cmd/tinygguf, llmtop-small) with
// `llama-server -m small.gguf --metrics --slots -c 2048 -t 1 -tb 1 [flags]`, two /completion
// requests of n_predict 1500 in flight, and the start-up line each run logged.
var kvuCaptures = []struct {
	file, flags, logLine string
	slots                int
	pool                 float64 // the KV pool the engine allocated, in tokens
}{
	{"llamacpp-b1-de3ff81-slots-auto.json", "", "0.00.017.785 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 2048, kv_unified = 'true'", 4, 2048},
	{"llamacpp-b1-de3ff81-slots-np2.json", "-np 2", "0.00.019.021 I srv    load_model: initializing, n_slots = 2, n_ctx_slot = 1024, kv_unified = 'false'", 2, 2048},
	{"llamacpp-b1-de3ff81-slots-np2-kvu.json", "-np 2 -kvu", "0.00.036.405 I srv    load_model: initializing, n_slots = 2, n_ctx_slot = 2048, kv_unified = 'true'", 2, 2048},
}

// TestSlotKVOnRealSlots checks the KV usage llmtop derives from each real /slots answer against the
// engine's own numbers: the tokens its busy slots hold (n_prompt_tokens, which counts the generated
// tokens in this build) over the pool it allocated (-c 2048, whether split or unified), once the
// layout is learned from the log line or the command line; and a floor with the unified reading as
// its top when nothing says.
func TestSlotKVOnRealSlots(t *testing.T) {
	for _, c := range kvuCaptures {
		t.Run(c.file, func(t *testing.T) {
			body, err := os.ReadFile("../../testdata/engines/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			slots := parseSlots(body)
			if len(slots) != c.slots {
				t.Fatalf("%d slots in the capture, the log says %d", len(slots), c.slots)
			}
			var held float64
			for _, sl := range slots {
				if sl.IsProcessing {
					held += sl.NPrompt
				}
			}
			if held == 0 {
				t.Fatal("no busy slot in the capture: it cannot show the layout")
			}
			unified := strings.Contains(c.logLine, "'true'")
			fromLog := engines.LlamaKVLayout(field(c.logLine, "kv_unified = "), "", c.slots)
			fromCmd := engines.LlamaKVLayout("", "llama-server -m small.gguf --metrics --slots -c 2048 "+c.flags, c.slots)
			for _, l := range []model.KVLayout{fromLog, fromCmd} {
				if !l.Known || l.Unified != unified {
					t.Fatalf("layout %+v, the engine logged %q", l, c.logLine)
				}
				s := model.NewSample("u", "m", t0, model.FromScrape)
				applySlots(&s, slots)
				model.SlotKV(&s, l)
				if got, want := s.Gauges[model.KVUsage], held/c.pool; math.Abs(got-want) > 1e-9 {
					t.Errorf("%s: KV usage %v, engine holds %v of %v tokens = %v", l.From, got, held, c.pool, want)
				}
				if got := s.Gauges[model.KVCapacityTokens]; got != c.pool {
					t.Errorf("%s: capacity %v, engine allocated %v", l.From, got, c.pool)
				}
				if _, ok := s.Gauges[model.KVUsageMax]; ok {
					t.Errorf("%s: a known layout still carries an upper bound", l.From)
				}
			}
			// Nothing says: the floor and the top must bracket the engine's usage.
			s := model.NewSample("u", "m", t0, model.FromScrape)
			applySlots(&s, slots)
			model.SlotKV(&s, engines.LlamaKVLayout("", "", c.slots))
			lo := s.Gauges[model.KVUsage]
			hi, okHi := s.Gauges[model.KVUsageMax]
			if real := held / c.pool; !okHi || lo > real+1e-9 || hi < real-1e-9 {
				t.Errorf("unknown layout: range %v–%v (top set %v) does not hold the engine's %v", lo, hi, okHi, real)
			}
			if _, ok := s.Gauges[model.KVCapacityTokens]; ok {
				t.Errorf("unknown layout: capacity %v claimed", s.Gauges[model.KVCapacityTokens])
			}
			if !strings.Contains(strings.Join(s.Notes, " "), "attach llama-server's log") {
				t.Errorf("unknown layout: notes %q do not say how to learn it", s.Notes)
			}
		})
	}
}

// field is the quoted value after key in a log line.
func field(line, key string) string {
	_, v, _ := strings.Cut(line, key)
	return strings.Trim(v, "'")
}
