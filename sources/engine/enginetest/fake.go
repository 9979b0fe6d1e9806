// Package enginetest serves fake engine HTTP surfaces from the fixture files
// in sources/engine/testdata, so tests of the adapters, the snapshot command
// and the monitor can run against each engine without the engine.
package enginetest

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"

	"github.com/llmtop/llmtop/model"
)

// Model names the fake engines serve. The vLLM and SGLang ones match the
// fixtures' model_name labels.
const (
	VLLMModel     = "meta-llama/Llama-3.1-8B-Instruct"
	SGLangModel   = "meta-llama/Llama-3.1-8B-Instruct"
	TGIModel      = "mistralai/Mistral-7B-Instruct-v0.3"
	LlamaCppModel = "qwen2.5-7b-instruct-q4_k_m"
	TRTLLMModel   = "meta-llama/Llama-3.1-70B-Instruct"
	TritonModel   = "tensorrt_llm"
	OllamaModel   = "mistral:latest"
)

// Dir is the fixtures folder (sources/engine/testdata), found from this
// file's location so any package's tests can use it.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Fixture returns a fixture file's bytes; it panics when the file is
// missing (a broken checkout, not a test outcome).
func Fixture(name string) []byte {
	b, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		panic(err)
	}
	return b
}

// Fake is one engine's HTTP surface. Metrics, when set, replaces the
// fixture body (for edge cases); Health sets the health route's status.
type Fake struct {
	Engine  model.Engine
	Metrics atomic.Pointer[[]byte]
	Health  atomic.Int32
	// Hits counts requests to the metrics route.
	Hits atomic.Int64
}

// New returns a fake of eng with its fixture loaded and health 200.
func New(eng model.Engine) *Fake {
	f := &Fake{Engine: eng}
	if name := metricsFixture[eng]; name != "" {
		b := Fixture(name)
		f.Metrics.Store(&b)
	}
	f.Health.Store(http.StatusOK)
	return f
}

var metricsFixture = map[model.Engine]string{
	model.VLLM:     "vllm.txt",
	model.SGLang:   "sglang.txt",
	model.TGI:      "tgi.txt",
	model.LlamaCpp: "llamacpp.txt",
	model.TRTLLM:   "trtllm.txt",
	model.Triton:   "triton.txt",
}

// SetMetrics replaces the metrics body.
func (f *Fake) SetMetrics(b []byte) { f.Metrics.Store(&b) }

func (f *Fake) metrics(w http.ResponseWriter) {
	f.Hits.Add(1)
	p := f.Metrics.Load()
	if p == nil {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(*p)
}

func (f *Fake) health(w http.ResponseWriter, body string) {
	code := int(f.Health.Load())
	w.WriteHeader(code)
	if code == http.StatusOK {
		_, _ = w.Write([]byte(body))
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func models(id, ownedBy string, extra map[string]any) map[string]any {
	card := map[string]any{"id": id, "object": "model", "owned_by": ownedBy}
	for k, v := range extra {
		card[k] = v
	}
	return map[string]any{"object": "list", "data": []any{card}}
}

// ServeHTTP answers the routes the engine has; others are 404.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, ok := routes[f.Engine][r.URL.Path]; ok {
		h(f, w, r)
		return
	}
	http.NotFound(w, r)
}

type route func(f *Fake, w http.ResponseWriter, r *http.Request)

func metricsRoute(f *Fake, w http.ResponseWriter, _ *http.Request) { f.metrics(w) }
func healthRoute(f *Fake, w http.ResponseWriter, _ *http.Request)  { f.health(w, "") }
func jsonRoute(v any) route {
	return func(_ *Fake, w http.ResponseWriter, _ *http.Request) { writeJSON(w, v) }
}
func fileRoute(name string) route {
	return func(_ *Fake, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(Fixture(name))
	}
}
func textRoute(s string) route {
	return func(_ *Fake, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(s)) }
}

var routes = map[model.Engine]map[string]route{
	model.VLLM: {
		"/v1/models": jsonRoute(models(VLLMModel, "vllm", map[string]any{"max_model_len": 131072, "root": VLLMModel})),
		"/version":   jsonRoute(map[string]any{"version": "0.11.2"}),
		"/health":    healthRoute,
		"/metrics":   metricsRoute,
	},
	model.SGLang: {
		"/v1/models":   jsonRoute(models(SGLangModel, "sglang", map[string]any{"max_model_len": 131072})),
		"/model_info":  jsonRoute(map[string]any{"model_path": SGLangModel, "is_generation": true}),
		"/server_info": jsonRoute(map[string]any{"version": "0.5.4", "context_length": 131072}),
		"/":            textRoute("SGLang is running"),
		"/api/tags":    jsonRoute(map[string]any{"models": []any{map[string]any{"name": SGLangModel}}}),
		"/health":      healthRoute,
		"/metrics":     metricsRoute,
	},
	model.TGI: {
		"/v1/models": jsonRoute(models(TGIModel, TGIModel, nil)),
		"/info": jsonRoute(map[string]any{"model_id": TGIModel, "max_input_tokens": 8191, "max_total_tokens": 8192,
			"router": "text-generation-router", "version": "3.3.6-dev0"}),
		"/health":  healthRoute,
		"/metrics": metricsRoute,
	},
	model.LlamaCpp: {
		"/v1/models": jsonRoute(models(LlamaCppModel, "llamacpp", nil)),
		"/props": jsonRoute(map[string]any{"build_info": "b6701-34af94cd", "model_alias": LlamaCppModel,
			"total_slots": 4, "default_generation_settings": map[string]any{"n_ctx": 8192}}),
		"/slots":   fileRoute("llamacpp_slots.json"),
		"/health":  func(f *Fake, w http.ResponseWriter, _ *http.Request) { f.health(w, `{"status":"ok"}`) },
		"/metrics": metricsRoute,
	},
	model.TRTLLM: {
		"/v1/models":          jsonRoute(models(TRTLLMModel, "tensorrt_llm", nil)),
		"/version":            jsonRoute(map[string]any{"version": "1.1.0"}),
		"/metrics":            fileRoute("trtllm_iteration_stats.json"),
		"/prometheus/metrics": metricsRoute,
		"/health":             healthRoute,
	},
	model.Triton: {
		"/v2":              jsonRoute(map[string]any{"name": "triton", "version": "2.59.0"}),
		"/v2/health/ready": healthRoute,
		"/metrics":         metricsRoute,
	},
	model.Ollama: {
		"/":            textRoute("Ollama is running"),
		"/api/version": fileRoute("ollama/api_version.json"),
		"/api/ps":      fileRoute("ollama/api_ps.json"),
		"/api/tags":    fileRoute("ollama/api_tags.json"),
		"/v1/models":   jsonRoute(models(OllamaModel, "library", nil)),
	},
}
