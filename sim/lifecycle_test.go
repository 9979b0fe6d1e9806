package sim

import (
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A configuration that cannot start logs vLLM's own failure, keeps the port
// closed and retries.
func TestStartupFaults(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"oom-at-start", Config{Scenario: OOMAtStart}, []string{
			"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.19 GiB",
			"RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
			"GPU KV cache size: "}},
		{"weights do not fit", Config{Model: "llama-3.1-70b"}, []string{
			"ValueError: Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights",
			"torch.OutOfMemoryError: CUDA out of memory."}},
		{"no memory for the cache", Config{GPUMemoryUtil: 0.2}, []string{
			"ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine"}},
		{"max seq len over the pool", Config{GPU: "l4"}, []string{
			"Available KV cache memory: 3.73 GiB",
			"ValueError: To serve at least one request with the model's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (3.73 GiB). Based on the available memory, the estimated maximum model length is 30576. Try increasing `gpu_memory_utilization`"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lb := &logBuf{}
			c.cfg.Log = lb
			s := newDriven(t, c.cfg)
			advance(t, s, 20*time.Second)
			if up, _ := s.Accepting(); up {
				t.Errorf("port open although the start failed")
			}
			log := lb.String()
			for _, w := range c.want {
				if !strings.Contains(log, w) {
					t.Errorf("log lacks %q:\n%s", w, log)
				}
			}
			n := strings.Count(log, "Engine core initialization failed")
			advance(t, s, 45*time.Second)
			if m := strings.Count(lb.String(), "Engine core initialization failed"); m <= n || n == 0 {
				t.Errorf("start not retried: %d failures, then %d", n, m)
			}
		})
	}
}

// The warm-up OOM follows the flags, not the scenario's name: the fix the
// diagnosis suggests (half the requests, or a lower utilization) starts.
func TestWarmupOOMFollowsTheFlags(t *testing.T) {
	cases := []struct {
		name   string
		cfg    Config
		starts bool
	}{
		{"oom-at-start as set: 0.98, 1024 seqs", Config{Scenario: OOMAtStart}, false},
		{"oom-at-start with --max-num-seqs 512", Config{Scenario: OOMAtStart, MaxNumSeqs: 512}, true},
		{"oom-at-start with --gpu-memory-utilization 0.95", Config{Scenario: OOMAtStart, GPUMemoryUtil: 0.95}, true},
		{"healthy at 0.98 fails the same way", Config{GPUMemoryUtil: 0.98}, false},
		{"healthy at 0.97 starts (1.88 GiB left for 1.5 GiB)", Config{GPUMemoryUtil: 0.97}, true},
		{"H200 at 0.98 has room for 1024", Config{GPU: "h200", GPUMemoryUtil: 0.98}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lb := &logBuf{}
			c.cfg.Log = lb
			s := newDriven(t, c.cfg)
			advance(t, s, 40*time.Second)
			up, _ := s.Accepting()
			failed := strings.Contains(lb.String(), "warming up sampler")
			if up != c.starts || failed == c.starts {
				t.Errorf("accepting %v, warm-up OOM logged %v; want start %v", up, failed, c.starts)
			}
		})
	}
}

func TestBadFlags(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Model: "gpt-5"}, "unknown simulated model"},
		{Config{GPU: "tpu"}, "unknown simulated GPU"},
		{Config{BlockSize: 7}, "invalid choice: 7"},
		{Config{KVCacheDtype: "int3"}, "invalid choice: 'int3'"},
		{Config{GPUMemoryUtil: 1.5}, "GPU memory utilization must be less than 1.0"},
		{Config{MaxModelLen: 200000}, "User-specified max_model_len (200000) is greater than the derived max_model_len"},
		{Config{ChunkedPrefill: ptr(false), MaxNumBatchedTokens: 4096, MaxModelLen: 8192}, "max_num_batched_tokens (4096) is smaller than max_model_len (8192)"},
		{Config{MaxNumSeqs: 512, MaxNumBatchedTokens: 256}, "must be greater than or equal to max_num_seqs"},
		{Config{Scenario: "healthy:1m,nope"}, `unknown scenario "nope"`},
		{Config{Scenario: "healthy,kv-pressure"}, "needs a duration"},
		{Config{Scenario: "healthy:soon"}, "bad duration"},
		{Config{Scenario: LongPrompts, MaxNumBatchedTokens: 4096}, "conflicts with the flags given"},
		{Config{MaxNumSeqs: -1}, "negative"},
	}
	for _, c := range cases {
		_, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}

// Serve closes the port while the process is down: clients get
// "connection refused", as from a real dead vLLM; then it comes back.
func TestServeRefusesWhileDown(t *testing.T) {
	s := newDriven(t, Config{Scenario: CrashRestart, Background: true, Seed: 6})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	health := func() (int, error) {
		var lastErr error
		for i := 0; i < 100; i++ { // Serve reacts to the phase change asynchronously
			resp, err := client.Get("http://" + addr + "/health")
			if err == nil {
				resp.Body.Close()
				return resp.StatusCode, nil
			}
			lastErr = err
			time.Sleep(20 * time.Millisecond)
			if errors.Is(err, syscall.ECONNREFUSED) {
				return 0, err
			}
		}
		return 0, lastErr
	}
	if code, err := health(); code != 200 {
		t.Fatalf("before the crash: %d %v", code, err)
	}
	advance(t, s, 16*time.Second)
	if code, err := health(); code != 503 {
		t.Errorf("engine dead: /health %d %v, want 503", code, err)
	}
	advance(t, s, 7*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	var derr error
	for time.Now().Before(deadline) { // until the old socket is gone
		c, err := net.Dial("tcp", addr)
		if derr = err; errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		if c != nil {
			c.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !errors.Is(derr, syscall.ECONNREFUSED) {
		t.Errorf("process down: dial error %v, want connection refused", derr)
	}
	advance(t, s, 16*time.Second)
	deadline = time.Now().Add(5 * time.Second)
	code := 0
	for code != 200 && time.Now().Before(deadline) {
		code, _ = health()
		time.Sleep(10 * time.Millisecond)
	}
	if code != 200 {
		t.Errorf("after the restart /health %d, want 200", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

var statsRe = regexp.MustCompile(`^\(APIServer pid=\d+\) INFO \d\d-\d\d \d\d:\d\d:\d\d \[loggers\.py:259\] Engine 000: Avg prompt throughput: \d+\.\d tokens/s, Avg generation throughput: \d+\.\d tokens/s, Running: \d+ reqs, Waiting: \d+ reqs, (Preemptions: [1-9]\d*, )?GPU KV cache usage: \d+\.\d%, Prefix cache hit rate: \d+\.\d%$`)

// The stats line has vLLM's format, every interval, with Preemptions only
// when there were some.
func TestStatsLines(t *testing.T) {
	for _, c := range []struct {
		scenario string
		preempt  bool
	}{{Healthy, false}, {KVPressure, true}} {
		lb := &logBuf{}
		s := newDriven(t, Config{Scenario: c.scenario, Background: true, Seed: 2, Log: lb, LogStatsInterval: 5 * time.Second})
		advance(t, s, 2*time.Minute)
		var stats []string
		for _, l := range strings.Split(lb.String(), "\n") {
			if strings.Contains(l, "loggers.py") {
				stats = append(stats, l)
				if !statsRe.MatchString(l) {
					t.Errorf("%s: stats line not in vLLM's format: %q", c.scenario, l)
				}
			}
		}
		if len(stats) != 24 {
			t.Errorf("%s: %d stats lines in 2 min at 5 s, want 24", c.scenario, len(stats))
		}
		if got := strings.Contains(strings.Join(stats, "\n"), "Preemptions"); got != c.preempt {
			t.Errorf("%s: Preemptions shown %v, want %v", c.scenario, got, c.preempt)
		}
		if !strings.Contains(lb.String(), "GPU KV cache size: ") || !strings.Contains(lb.String(), " tokens per request: ") {
			t.Errorf("%s: no KV capacity start-up line", c.scenario)
		}
	}
}

// Cold start: the port stays closed during a long start, then traffic ramps
// up on an empty prefix cache.
func TestColdStart(t *testing.T) {
	s := newDriven(t, Config{Scenario: ColdStart, Background: true, Seed: 3})
	advance(t, s, 40*time.Second)
	if up, _ := s.Accepting(); up {
		t.Fatal("listening during the 45 s start")
	}
	if l := s.Load(); l.Up || l.MemUsed >= GiB {
		t.Errorf("load while starting: %+v", l)
	}
	advance(t, s, 10*time.Second)
	if up, _ := s.Accepting(); !up {
		t.Fatal("not up after the start")
	}
	advance(t, s, 10*time.Second)
	early := value(families(t, s), "vllm:generation_tokens_total", "", "")
	advance(t, s, 50*time.Second)
	mid := value(families(t, s), "vllm:generation_tokens_total", "", "")
	advance(t, s, 10*time.Second)
	late := value(families(t, s), "vllm:generation_tokens_total", "", "")
	if !(early < (late-mid)*10/2) { // first 10 s well below a later 10 s: the ramp
		t.Errorf("no ramp: %v tokens in the first 10 s, %v in a later 10 s", early, late-mid)
	}
	l := s.Load()
	if !l.Up || l.Util <= 0 || l.Util > 1 || l.MemUsed <= 0 || l.MemUsed > l.MemTotal || l.BatchShare <= 0 || l.KVUsed > l.KVTotal {
		t.Errorf("load while serving: %+v", l)
	}
}

// A flag valid beside the scenario's own flags starts, as vLLM would with
// the same settings: --max-num-batched-tokens 768 under kv-pressure's
// --max-num-seqs 256 (vLLM refuses a budget under --max-num-seqs; checked
// alone against the default 1024 the sim refused it). Still refused: the
// same flag under the default cap, and a flag wrong whatever the scenario.
func TestFlagsCheckedBesideTheScenario(t *testing.T) {
	if _, err := New(Config{Scenario: KVPressure, MaxNumBatchedTokens: 768, Clock: NewFakeClock(t0)}); err != nil {
		t.Errorf("kv-pressure (--max-num-seqs 256) with --max-num-batched-tokens 768: %v", err)
	}
	_, err := New(Config{Scenario: Healthy, MaxNumBatchedTokens: 768, Clock: NewFakeClock(t0)})
	if err == nil || !strings.Contains(err.Error(), "max_num_batched_tokens (768) must be greater than or equal to max_num_seqs (1024)") {
		t.Errorf("healthy (--max-num-seqs 1024 by default) with 768: %v", err)
	}
	_, err = New(Config{Scenario: KVPressure, MaxNumSeqs: -1, Clock: NewFakeClock(t0)})
	if err == nil || strings.Contains(err.Error(), "scenario") {
		t.Errorf("a negative --max-num-seqs is wrong whatever the scenario: %v", err)
	}
}
