package engines

import (
	"testing"

	"github.com/llmtop/llmtop/model"
)

// The log catalogue is assembled from the engine files: every row once,
// each engine's own rows naming that engine.
func TestLogLinesAreEachEnginesOwn(t *testing.T) {
	seen := map[string]bool{}
	rows := LogLines()
	if len(rows) < 90 {
		t.Fatalf("only %d log lines", len(rows))
	}
	for _, l := range rows {
		if seen[l.ID] {
			t.Errorf("%s twice", l.ID)
		}
		seen[l.ID] = true
	}
	for _, s := range All() {
		for _, l := range s.Logs {
			if e := LogEngine(l.ID); e != s.ID {
				t.Errorf("%s is in %s's file but LogEngine says %q", l.ID, s.Name, e)
			}
		}
	}
	if python := rows[len(rows)-1]; python.ID != "python_traceback" {
		t.Errorf("the generic traceback row must come last, got %s", python.ID)
	}
	for _, shared := range []string{"torch_cuda_oom", "uvicorn_shutting_down", "ggml_buffer_alloc", "python_traceback"} {
		if e := LogEngine(shared); e != model.Unknown {
			t.Errorf("%s is printed by several engines, LogEngine says %s", shared, e)
		}
	}
}

// The run ledger calls a silent end "killed" only for engines that log a
// clean shutdown: uvicorn's lines for vLLM, SGLang and trtllm-serve,
// llama-server's own; not TGI (a Rust router) nor Ollama (silent at INFO).
func TestLogsShutdown(t *testing.T) {
	want := map[model.Engine]bool{model.VLLM: true, model.SGLang: true, model.LlamaCpp: true, model.TRTLLM: true,
		model.TGI: false, model.Ollama: false}
	for e, w := range want {
		if got := LogsShutdown(e); got != w {
			t.Errorf("LogsShutdown(%s) = %v, want %v", e, got, w)
		}
	}
}
