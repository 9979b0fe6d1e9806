package diagnosis

import (
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// notExposed says why a metric is absent from ep: the newest scrape failed
// (then nothing is known of what the engine exposes), or the engine (by
// its own name: Triton is not TensorRT-LLM's trtllm-serve) does not expose
// it.
func notExposed(ep Endpoint) string {
	if ep.Scrape.Err != "" {
		return "the newest scrape failed: " + nonEmpty(string(ep.Scrape.ErrKind), "error")
	}
	return engineName(ep.Identity.Engine) + " does not expose it"
}

// engineName is how the actions name an engine (engines/: its Name).
func engineName(e model.Engine) string {
	if s := engines.Of(e); s != nil {
		return s.Name
	}
	return "engine"
}

// forEngine picks the engine's action from a table; for an unknown engine it
// returns every engine's, each prefixed with its name (a serving layer's
// and one that repeats another's change left out).
func forEngine(eng model.Engine, table map[model.Engine]Action) []Action {
	if a, ok := table[eng]; ok {
		return []Action{a}
	}
	if eng != model.Unknown {
		return nil
	}
	var out []Action
	seen := map[string]bool{}
	for _, s := range engines.All() {
		if a, ok := table[s.ID]; ok && s.Like == model.Unknown && !seen[a.Change] {
			seen[a.Change] = true
			a.Change = s.Name + ": " + a.Change
			out = append(out, a)
		}
	}
	return out
}

// metricSource names the metric an evidence number came from: the one
// the adapter recorded it read (State.From: an older vLLM's
// vllm:time_per_output_token_seconds for ITL). Engine metric names live
// in one table (engines.Metrics) that the adapters read; the rules
// never guess one. When the adapter recorded none (a Prometheus-evaluated
// origin, an engine that does not say), the concept itself is named.
func metricSource(ep Endpoint, concept string) string {
	if ep.State.Source == model.FromLog {
		return "log stats line"
	}
	from := func(keys ...string) string {
		for _, k := range keys {
			if n := ep.State.From[k]; n != "" {
				return n
			}
		}
		return ""
	}
	var n string
	switch concept {
	case "prefix":
		if h, q := from(string(model.PrefixHits)), from(string(model.PrefixQueries)); h != "" && q != "" {
			n = h + " / " + q
		} else {
			n = from(string(model.PrefixHitGauge))
		}
	case "spec":
		if a, d := from(string(model.SpecAcceptTokens)), from(string(model.SpecDraftTokens)); a != "" && d != "" {
			n = a + " / " + d
		} else {
			n = from(string(model.SpecAcceptGauge))
		}
	case "finish":
		n = from(model.FinishReasons)
	default:
		n = from(modelConcept[concept])
	}
	if n != "" {
		return n
	}
	return concept
}

// modelConcept maps the rules' concept names to the model's (the keys of
// State.From).
var modelConcept = map[string]string{
	"ttft": string(model.TTFT), "itl": string(model.ITL), "tpot": string(model.TPOT), "queue": string(model.Queue),
	"prefill": string(model.Prefill), "running": string(model.Running), "waiting": string(model.Waiting),
	"kv": string(model.KVUsage), "preemptions": string(model.Preemptions), "prompt": string(model.PromptTokens),
	"gen": string(model.GenTokens), "prompt_len": string(model.PromptLen), "output_len": string(model.OutputLen),
	"batch_per_step": string(model.BatchPerStep), "step_tokens": string(model.StepTokens),
	"http_5xx": string(model.HTTP5xx), "http_4xx": string(model.HTTP4xx), "e2e": string(model.E2E), "decode": string(model.Decode),
}

// infoKey returns the first of keys present in the endpoint's info labels.
func infoKey(ep Endpoint, keys ...string) (string, bool) {
	for _, k := range keys {
		if v, ok := ep.State.Info[k]; ok && v != "" {
			return v, true
		}
	}
	return "", false
}

func isTrue(s string) bool {
	s = strings.ToLower(s)
	return s == "true" || s == "1" || s == "on" || s == "yes"
}
