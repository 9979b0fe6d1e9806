package sim

import (
	"testing"
	"time"
)

// Under queue-buildup the batch is pinned at --max-num-seqs, the queue grows
// and queueing is most of the time to first token.
func TestQueueBuildupWaitingGrowsAndQueueDominatesTTFT(t *testing.T) {
	s := newDriven(t, Config{Scenario: QueueBuildup, Background: true, Seed: 1})
	var waiting []float64
	for i := 0; i < 6; i++ {
		advance(t, s, 20*time.Second)
		f := families(t, s)
		waiting = append(waiting, value(f, "vllm:num_requests_waiting", "", ""))
		if r := value(f, "vllm:num_requests_running", "", ""); r != 32 {
			t.Errorf("t=%ds running=%v, want pinned at --max-num-seqs 32", (i+1)*20, r)
		}
	}
	for i := 1; i < len(waiting); i++ {
		if waiting[i] <= waiting[i-1] {
			t.Errorf("waiting did not grow: %v", waiting)
			break
		}
	}
	f := families(t, s)
	queue, ttft := histMean(hist(f, "vllm:request_queue_time_seconds")), histMean(hist(f, "vllm:time_to_first_token_seconds"))
	if !(queue > 0.8*ttft) {
		t.Errorf("mean queue time %.2fs is not most of mean TTFT %.2fs", queue, ttft)
	}
	t.Logf("waiting every 20s: %v; mean queue %.2fs of mean TTFT %.2fs", waiting, queue, ttft)
}

// Under kv-pressure the pool fills and running requests are preempted.
func TestKVPressureFillsCacheAndPreempts(t *testing.T) {
	s := newDriven(t, Config{Scenario: KVPressure, Background: true, Seed: 2})
	maxKV := 0.0
	var pre []float64
	for i := 0; i < 12; i++ {
		advance(t, s, 10*time.Second)
		f := families(t, s)
		maxKV = max(maxKV, value(f, "vllm:kv_cache_usage_perc", "", ""))
		pre = append(pre, value(f, "vllm:num_preemptions_total", "", ""))
	}
	if maxKV <= 0.95 {
		t.Errorf("max KV usage %.3f, want > 0.95", maxKV)
	}
	if !(pre[11] > pre[5] && pre[5] > 0) {
		t.Errorf("preemptions did not increase: %v", pre)
	}
	t.Logf("max KV usage %.3f; preemptions every 10s: %v", maxKV, pre)
}

// A fixed, saturating load under growing --max-num-seqs: throughput rises
// with the batch while TPOT rises with it, until the KV pool saturates and
// more sequences only buy preemptions.
func TestMaxNumSeqsThroughputKnee(t *testing.T) {
	type result struct{ seqs, tput, tpot, kv, pre float64 }
	var res []result
	for _, seqs := range []int{8, 32, 128, 512} {
		s := newDriven(t, Config{Background: true, Seed: 3, Rate: 60, MaxNumSeqs: seqs, MaxModelLen: 8192, NumGPUBlocksOverride: 6000})
		advance(t, s, 30*time.Second) // warm up
		g0 := value(families(t, s), "vllm:generation_tokens_total", "", "")
		maxKV := 0.0
		for i := 0; i < 9; i++ {
			advance(t, s, 10*time.Second)
			maxKV = max(maxKV, value(families(t, s), "vllm:kv_cache_usage_perc", "", ""))
		}
		f := families(t, s)
		res = append(res, result{float64(seqs), (value(f, "vllm:generation_tokens_total", "", "") - g0) / 90,
			histMean(hist(f, "vllm:request_time_per_output_token_seconds")), maxKV, value(f, "vllm:num_preemptions_total", "", "")})
	}
	for i, r := range res {
		t.Logf("max-num-seqs %4.0f: %7.0f tok/s, mean TPOT %5.1f ms, max KV %.2f, preemptions %.0f", r.seqs, r.tput, r.tpot*1000, r.kv, r.pre)
		if i == 0 || i == 3 {
			continue
		}
		if !(r.tput > 1.3*res[i-1].tput) {
			t.Errorf("max-num-seqs %v: throughput %.0f not clearly above %.0f", r.seqs, r.tput, res[i-1].tput)
		}
		if !(r.tpot > res[i-1].tpot) {
			t.Errorf("max-num-seqs %v: TPOT %.4f did not rise from %.4f", r.seqs, r.tpot, res[i-1].tpot)
		}
	}
	last, prev := res[3], res[2]
	if !(last.kv > 0.95 && last.pre > 0) {
		t.Errorf("at 512 seqs the pool should saturate: max KV %.2f, preemptions %.0f", last.kv, last.pre)
	}
	if last.tput > 1.3*prev.tput {
		t.Errorf("past KV saturation throughput kept climbing: %.0f → %.0f tok/s", prev.tput, last.tput)
	}
}

// Whole-prompt prefill of long documents stalls every decode in the batch;
// chunked prefill interleaves them, so ITL p99 drops.
func TestChunkedPrefillLowersITLp99UnderLongPrompts(t *testing.T) {
	p99 := func(cfg Config) float64 {
		cfg.Scenario, cfg.Background, cfg.Seed = LongPrompts, true, 4
		s := newDriven(t, cfg)
		advance(t, s, 3*time.Minute)
		return histQuantile(hist(families(t, s), "vllm:inter_token_latency_seconds"), 0.99)
	}
	off := p99(Config{})
	on := p99(Config{ChunkedPrefill: ptr(true)})
	t.Logf("ITL p99≈ %.0f ms without chunked prefill, %.0f ms with", off*1000, on*1000)
	if !(on < 0.6*off) {
		t.Errorf("chunked prefill ITL p99 %.3fs not well below %.3fs", on, off)
	}
}

// A crash and restart resets every counter, like a restarted vLLM.
func TestCrashRestartResetsCounters(t *testing.T) {
	s := newDriven(t, Config{Scenario: CrashRestart, Background: true, Seed: 5})
	advance(t, s, 14*time.Second)
	before := value(families(t, s), "vllm:generation_tokens_total", "", "")
	if before <= 0 {
		t.Fatalf("no tokens before the crash: %v", before)
	}
	advance(t, s, 2*time.Second) // crash at 15 s
	s.mu.Lock()
	ph := s.phase
	s.mu.Unlock()
	if ph != phaseDead {
		t.Fatalf("phase %v after the crash, want dead", ph)
	}
	if errs := value(families(t, s), "vllm:request_success_total", "finished_reason", "error"); errs <= 0 {
		t.Errorf("in-flight requests not failed with finished_reason=error: %v", errs)
	}
	advance(t, s, 7*time.Second)
	if up, _ := s.Accepting(); up {
		t.Errorf("still accepting connections after the process exited")
	}
	advance(t, s, 14*time.Second) // down 3 s, a 12 s start, then 1 s serving
	if up, _ := s.Accepting(); !up {
		t.Fatalf("not back up after the restart")
	}
	after := value(families(t, s), "vllm:generation_tokens_total", "", "")
	if !(after < before) {
		t.Errorf("generation_tokens_total %v after restart, want reset below %v", after, before)
	}
}

// Same seed, same run.
func TestDeterministicPerSeed(t *testing.T) {
	run := func() float64 {
		s := newDriven(t, Config{Scenario: "healthy:20s,kv-pressure", Background: true, Seed: 9})
		advance(t, s, 90*time.Second)
		f := families(t, s)
		return value(f, "vllm:generation_tokens_total", "", "")*1e6 + value(f, "vllm:num_preemptions_total", "", "")
	}
	if a, b := run(), run(); a != b {
		t.Errorf("two runs with seed 9 differ: %v vs %v", a, b)
	}
}

// Ten simulated minutes of busy traffic take well under a second.
func BenchmarkTenSimulatedMinutes(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := newDriven(b, Config{Scenario: Healthy, Background: true, Seed: 1})
		advance(b, s, 10*time.Minute)
	}
}
