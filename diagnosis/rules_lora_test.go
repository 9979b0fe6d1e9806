package diagnosis

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// The measured case SERVING-LAYERS.md §5.7 cites (course material, max-loras
// 4 against 8 adapters): deferred 41, KV 63 %, running 62 of 96.
func TestLoRAStarved(t *testing.T) {
	starved := func(mut func(*Endpoint)) Endpoint {
		return ep(func(e *Endpoint) {
			e.State.Running, e.State.MaxRunning, e.State.Waiting, e.State.Deferred = model.Some(62), model.Some(96), model.Some(45), model.Some(41)
			e.State.KVUsage = model.Some(0.63)
			e.State.LoRA = &model.LoRA{Running: []string{"a1", "a2", "a3", "a4"}, Waiting: []string{"a5", "a6", "a7", "a8"}, Max: 4}
			e.State.From = map[string]string{"lora": "vllm:lora_requests_info"}
			if mut != nil {
				mut(e)
			}
		})
	}
	runCases(t, []ruleCase{
		{name: "adapters wait, KV and batch have room", in: input(starved(nil)), want: "lora_starved",
			check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--max-loras 8") || !strings.Contains(f.Title, "41 deferred with KV at 63 %") || !hasEvidence(f, "waiting a5, a6, a7, a8 (max_lora 4)") {
					t.Errorf("%q %+v %+v", f.Title, f.Actions, f.Evidence)
				}
			}},
		{name: "KV full: not the adapters", in: input(starved(func(e *Endpoint) { e.State.KVUsage = model.Some(0.97) })), none: "lora_starved"},
		{name: "batch at its cap", in: input(starved(func(e *Endpoint) { e.State.Running = model.Some(96) })), none: "lora_starved"},
		{name: "no adapter waiting", in: input(starved(func(e *Endpoint) { e.State.LoRA.Waiting = nil })), none: "lora_starved"},
		{name: "no LoRA", in: input(starved(func(e *Endpoint) { e.State.LoRA = nil })), none: "lora_starved"},
	})
}

// SGLang's LoRA pool full (3 of 3 slots: --max-loras-per-batch 3) with 12
// requests waiting, KV at 40 %, the batch under its cap: the adapters, with
// SGLang's own flag doubled; the same pool with KV full is not.
func TestSGLangLoRAPoolFull(t *testing.T) {
	sg := func(kv float64) Endpoint {
		return ep(func(e *Endpoint) {
			e.Identity.Engine = model.SGLang
			e.State.LoRASlots, e.State.LoRASlotsMax = model.Some(3), model.Some(3)
			e.State.Waiting, e.State.Running, e.State.MaxRunning, e.State.KVUsage = model.Some(12), model.Some(20), model.Some(64), model.Some(kv)
			e.State.From = map[string]string{string(model.LoRASlotsUsed): "sglang:lora_pool_slots_used", string(model.LoRASlotsTotal): "sglang:lora_pool_slots_total"}
		})
	}
	rep := Evaluate(input(sg(0.4)), DefaultConfig())
	f := byID(rep, "lora_starved")
	if f == nil || f.Title != "requests wait for a LoRA adapter slot: all 3 slots in use, 12 waiting with KV at 40 %" ||
		!hasAction(f, "--max-loras-per-batch 6") || !hasEvidence(f, "LoRA slots 3 of 3 in use") {
		t.Fatalf("%+v", f)
	}
	if f := byID(Evaluate(input(sg(0.95)), DefaultConfig()), "lora_starved"); f != nil {
		t.Errorf("KV full read as the adapters: %q", f.Title)
	}
}
