package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/logs"
)

// feedLog reads lines through the real log source and catalogue (as
// --log does) into m.
func feedLog(t *testing.T, m *Monitor, lines ...string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "engine.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	msgs, err := logs.ReadTail(path, 0, logs.Options{Endpoint: url, Now: func() time.Time { return m.Now() }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range msgs {
		if in, ok := msg.(model.Input); ok {
			m.Apply(in)
		}
	}
}

func actionsText(f *diagnosis.Finding) string {
	var s []string
	for _, a := range f.Actions {
		s = append(s, a.Change+" | "+a.Why)
	}
	return strings.Join(s, "\n")
}

// Issue 31, item 8: a CUDA OOM on vLLM 0.6.3 serving max_model_len 32768
// was told "--gpu-memory-utilization 0.85 (lower)" (a constant, which can
// be a raise) and "--max-num-batched-tokens 4096", which V0 refuses to start
// with unless chunked prefill is on; the snapshot's version was "" while
// its run said 0.6.3. The V0 "args: Namespace(…)" line is the run's
// configuration; the advice reads it and the version.
func TestCUDAOOMAdviceReadsTheV0ConfigAndVersion(t *testing.T) {
	m := newMonitor()
	m.Apply(model.Scrape{Endpoint: url, Time: at(0), Err: "connection refused", ErrKind: model.ErrRefused})
	feedLog(t, m,
		"INFO 11-24 10:00:01 api_server.py:528] vLLM API server version 0.6.3",
		"INFO 11-24 10:00:01 api_server.py:529] args: Namespace(allow_credentials=False, allowed_headers=['*'], api_key=None, block_size=16, enable_chunked_prefill=None, enable_prefix_caching=False, gpu_memory_utilization=0.95, host=None, kv_cache_dtype='auto', max_model_len=32768, max_num_batched_tokens=None, max_num_seqs=256, model='Qwen/Qwen2.5-7B-Instruct')",
	)
	e := newEngine("", at(1), 0.02) // a V0 vLLM: its scrape names no version
	run(m, e, 5, 10, 2, 100)
	feedLog(t, m, "ERROR 11-24 10:00:15 engine.py:135] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free.")
	m.Evaluate(at(16))
	var oom *diagnosis.Finding
	for _, f := range m.Report().Findings {
		if f.ID == "cuda_oom" {
			oom = &f
		}
	}
	if oom == nil {
		t.Fatalf("no cuda_oom: %s", findingIDs(m.Report().Findings))
	}
	acts := actionsText(oom)
	if !strings.Contains(acts, "--gpu-memory-utilization 0.90 (from 0.95)") {
		t.Errorf("the memory share is not lowered from the served 0.95:\n%s", acts)
	}
	if !strings.Contains(acts, "--enable-chunked-prefill --max-num-batched-tokens 4096") || !strings.Contains(acts, "0.6.3 with max_model_len 32768") {
		t.Errorf("a V0 budget without chunked prefill (vLLM refuses to start):\n%s", acts)
	}
	if strings.Contains(acts, "0.85") {
		t.Errorf("the constant is back:\n%s", acts)
	}
	if ej := m.endpointJSON(url); ej.Version != "0.6.3" {
		t.Errorf("snapshot version %q, want the run's 0.6.3", ej.Version)
	}
	if c := m.RunsOf(url)[0].Config; c["args.gpu_memory_utilization"] != "0.95" || c["args.max_model_len"] != "32768" || c["args.host"] != "" {
		t.Errorf("run config from the Namespace line: %v", c)
	}
}

// Issue 31, item 10: with a vLLM V1 log attached and the endpoint down, the
// engine was "" and the advice listed all six engines' flags, though
// "loggers.py … Engine 000: Avg prompt throughput" is vLLM's alone.
func TestEngineNamedByItsStatsLineWhileDown(t *testing.T) {
	m := newMonitor()
	for s := 0.0; s < 5; s++ {
		m.Apply(down(at(s)))
	}
	feedLog(t, m,
		"INFO 11-24 10:00:02 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 30.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix cache hit rate: 0.0%",
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free.",
	)
	m.Evaluate(at(6))
	if ej := m.endpointJSON(url); ej.Engine != model.VLLM {
		t.Errorf("snapshot engine %q, want vllm from its log", ej.Engine)
	}
	for _, f := range m.Report().Findings {
		if f.ID != "cuda_oom" {
			continue
		}
		acts := actionsText(&f)
		if strings.Contains(acts, "SGLang:") || strings.Contains(acts, "TGI:") || !strings.Contains(acts, "--gpu-memory-utilization") {
			t.Fatalf("advice for every engine, not vLLM's:\n%s", acts)
		}
		return
	}
	t.Fatalf("no cuda_oom: %s", findingIDs(m.Report().Findings))
}
