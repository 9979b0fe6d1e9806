package engines

import "github.com/llmtop/llmtop/model"

// Ollama has no Prometheus metrics: llmtop reads /api/ps (ENGINES.md §6).
var Ollama = Spec{
	ID:    model.Ollama,
	Name:  "Ollama",
	Ports: []int{11434},
	Levers: Levers{
		Cap:    "OLLAMA_NUM_PARALLEL=%s",
		MaxLen: "OLLAMA_CONTEXT_LENGTH=%s",
		FP8KV:  Change{Change: "OLLAMA_KV_CACHE_TYPE=q8_0 (with OLLAMA_FLASH_ATTENTION=1)", Why: "halves the KV cache", TradeOff: "small accuracy cost"},
	},
	Metrics: ollamaMetrics,
}

var ollamaMetrics = []MetricSource{
	absent(string(model.TTFT), "not exposed (per request prompt_eval_duration)"),
	absent(string(model.TPOT), "eval_duration / eval_count per request"),
	absent(string(model.E2E), "total_duration per request"),
	absent(string(model.Running), "not exposed (/api/ps lists loaded models only)"),
	absent(string(model.KVUsage), "not exposed (size_vram/size is the offload ratio)"),
}
