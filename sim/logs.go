package sim

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// vlog writes vLLM-format log lines: "(APIServer pid=N) INFO 11-22 04:50:01
// [file.py:123] message" (vllm/logger.py _FORMAT and _DATE_FORMAT, with the
// worker-name prefix of vllm/utils/system_utils.py). The writer must not
// block: it is called under the sim's lock.
type vlog struct {
	w               io.Writer
	apiPid, corePid int
}

const (
	procAPI  = "APIServer"
	procCore = "EngineCore_DP0"
)

func (l *vlog) line(t time.Time, proc, level, file, msg string) {
	if l.w == nil {
		return
	}
	pid := l.apiPid
	if proc == procCore {
		pid = l.corePid
	}
	var b strings.Builder
	for _, m := range strings.Split(msg, "\n") {
		fmt.Fprintf(&b, "(%s pid=%d) %s %s [%s] %s\n", proc, pid, level, t.Format("01-02 15:04:05"), file, m)
	}
	_, _ = io.WriteString(l.w, b.String())
}

// uvicorn lines carry no date or file: "INFO:     Started server process [N]".
func (l *vlog) uvicorn(msg string) {
	if l.w == nil {
		return
	}
	_, _ = fmt.Fprintf(l.w, "(%s pid=%d) INFO:     %s\n", procAPI, l.apiPid, msg)
}

// commas formats n with thousands separators, as Python's f"{n:,}".
func commas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func gib(b float64) float64 { return b / GiB }

// startupLines are the lines of a vLLM start, each at a share of the load
// time. The KV lines come from plan; a fault ends the list early.
func (l *vlog) startupLines(c engineConfig, p kvPlan) []logLine {
	core := func(at float64, file, msg string) logLine { return logLine{at, procCore, "INFO", file, msg} }
	api := func(at float64, file, msg string) logLine { return logLine{at, procAPI, "INFO", file, msg} }
	lines := []logLine{
		api(0, "api_server.py:1885", "vLLM API server version "+Version),
		api(0, "utils.py:233", "non-default args: {"+strings.Join(c.explicit, ", ")+"}"),
		api(0.02, "model.py:547", "Resolved architecture: "+c.model.Arch),
		api(0.02, "model.py:1510", fmt.Sprintf("Using max model len %d", c.maxModelLen)),
	}
	if c.chunked {
		lines = append(lines, api(0.03, "scheduler.py:205", fmt.Sprintf("Chunked prefill is enabled with max_num_batched_tokens=%d.", c.maxBatched)))
	}
	lines = append(lines,
		core(0.05, "core.py:77", fmt.Sprintf("Initializing a V1 LLM engine (v%s) with config: model='%s', speculative_config=None, tokenizer='%s', max_seq_len=%d, kv_cache_dtype=%s, enable_prefix_caching=%s, served_model_name=%s", Version, c.model.ID, c.model.ID, c.maxModelLen, c.kvDtype, pyBool(c.prefixCaching), c.served)),
		core(0.08, "gpu_model_runner.py:2602", "Starting to load model "+c.model.ID+"..."),
	)
	if p.fault == faultLoadOOM {
		return lines
	}
	load := c.model.WeightsBytes / 5e9 // seconds at ~5 GB/s from local disk
	lines = append(lines,
		core(0.35, "default_loader.py:267", fmt.Sprintf("Loading weights took %.2f seconds", load)),
		core(0.38, "gpu_model_runner.py:2653", fmt.Sprintf("Model loading took %.4f GiB and %.6f seconds", gib(c.model.WeightsBytes), load+0.8)),
	)
	if p.fault == faultNoKVMem {
		return lines
	}
	lines = append(lines, core(0.6, "gpu_worker.py:298", fmt.Sprintf("Available KV cache memory: %.2f GiB", gib(p.availBytes))))
	if p.fault == faultSeqLen {
		return lines
	}
	lines = append(lines, core(0.62, "kv_cache_utils.py:1087", fmt.Sprintf("GPU KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx", commas(p.tokens), commas(c.maxModelLen), p.maxConc)))
	if p.fault == faultWarmupOOM {
		return lines
	}
	lines = append(lines,
		core(0.9, "gpu_model_runner.py:3480", "Graph capturing finished in 6 secs, took 0.52 GiB"),
		core(0.95, "core.py:210", fmt.Sprintf("init engine (profile, create kv cache, warmup model) took %.2f seconds", 0.9*c.startup.Seconds())),
	)
	return lines
}

// logLine is a startup line scheduled at a share of the start-up time.
type logLine struct {
	at                      float64
	proc, level, file, text string
}

// faultLines are the error texts vLLM prints when the start fails.
func faultLines(c engineConfig, p kvPlan) []string {
	const docs = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
	total := gib(c.gpu.VRAM)
	switch p.fault {
	case faultLoadOOM:
		free := 0.3
		return []string{
			"EngineCore failed to start.",
			"Traceback (most recent call last):",
			fmt.Sprintf("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of %.2f GiB of which %.2f GiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and 0.17 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)", total, free, total-free, total-free-0.6),
			"ValueError: Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using --quantization. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. (original error: CUDA out of memory. Tried to allocate 1.96 GiB.)",
		}
	case faultNoKVMem:
		return []string{
			"EngineCore failed to start.",
			"Traceback (most recent call last):",
			"ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). " + docs,
		}
	case faultSeqLen:
		need := gib(float64(c.maxModelLen) * c.model.kvBytesPerToken(c.fp8))
		return []string{
			"EngineCore failed to start.",
			"Traceback (most recent call last):",
			fmt.Sprintf("ValueError: To serve at least one request with the model's max seq len (%d), (%.2f GiB KV cache is needed, which is larger than the available KV cache memory (%.2f GiB). Based on the available memory, the estimated maximum model length is %d. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. "+docs, c.maxModelLen, need, gib(p.availBytes), p.tokens),
		}
	case faultWarmupOOM:
		used := total*c.memUtil + gib(nonTorchMemory)
		return []string{
			"EngineCore failed to start.",
			"Traceback (most recent call last):",
			fmt.Sprintf("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 has a total capacity of %.2f GiB of which %.2f GiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and 0.41 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)", gib(c.warmupBytes()), total, max(0, total-used), used, used-0.9),
			fmt.Sprintf("RuntimeError: CUDA out of memory occurred when warming up sampler with %d dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.", c.maxNumSeqs),
		}
	}
	return nil
}

// statsLine is LoggingStatLogger.log's line (vllm/v1/metrics/loggers.py).
func statsLine(promptTput, genTput float64, running, waiting, preempt int, kv, hit float64) string {
	parts := []string{
		fmt.Sprintf("Engine 000: Avg prompt throughput: %.1f tokens/s", promptTput),
		fmt.Sprintf("Avg generation throughput: %.1f tokens/s", genTput),
		fmt.Sprintf("Running: %d reqs", running),
		fmt.Sprintf("Waiting: %d reqs", waiting),
	}
	if preempt > 0 {
		parts = append(parts, fmt.Sprintf("Preemptions: %d", preempt))
	}
	parts = append(parts,
		fmt.Sprintf("GPU KV cache usage: %.1f%%", kv*100),
		fmt.Sprintf("Prefix cache hit rate: %.1f%%", hit*100))
	return strings.Join(parts, ", ")
}
