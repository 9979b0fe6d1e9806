package logs

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// feedLines runs lines through the matcher and a stats state, one second
// apart, and returns every sample produced.
func feedLines(t *testing.T, lines ...string) []model.Sample {
	t.Helper()
	st := newStatsState("http://e", "m")
	at := time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)
	var out []model.Sample
	for i, l := range lines {
		mt, ok := DefaultMatcher.Match(l)
		if !ok {
			continue
		}
		out = append(out, st.feed(mt, l, at.Add(time.Duration(i)*time.Second))...)
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func wantGauges(t *testing.T, sm model.Sample, want map[model.Gauge]float64) {
	t.Helper()
	for g, v := range want {
		got, ok := sm.Gauges[g]
		if !ok || !near(got, v) {
			t.Errorf("gauge %s = %v (present %v), want %v", g, got, ok, v)
		}
	}
}

func TestVLLMStatsCurrentFormat(t *testing.T) {
	s := feedLines(t,
		"INFO 08-14 12:00:01 [kv_cache_utils.py:1000] GPU KV cache size: 470,080 tokens",
		"INFO 08-14 12:00:01 [loggers.py:259] Engine 000: Avg prompt throughput: 1234.5 tokens/s, Avg generation throughput: 456.7 tokens/s, Running: 12 reqs, Waiting: 3 reqs, Deferred: 1 reqs, Preemptions: 2, GPU KV cache usage: 87.5%, Prefix cache hit rate: 41.2%",
		"INFO 08-14 12:00:11 [loggers.py:259] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 30.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix cache hit rate: 0.0%",
		"INFO 08-14 12:00:21 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.31, Accepted throughput: 40.12 tokens/s, Drafted throughput: 90.00 tokens/s, Accepted: 401 tokens, Drafted: 900 tokens, Per-position acceptance rate: 0.700, 0.450, Avg Draft acceptance rate: 44.6%",
		"INFO 08-14 12:00:31 [loggers.py:259] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 30.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, Preemptions: 5, GPU KV cache usage: 0.3%, Prefix cache hit rate: 0.0%",
	)
	if len(s) != 3 {
		t.Fatalf("%d samples, want 3", len(s))
	}
	wantGauges(t, s[0], map[model.Gauge]float64{
		model.PromptTPSGauge: 1234.5, model.GenTPSGauge: 456.7, model.Running: 12, model.Waiting: 3,
		model.Deferred: 1, model.KVUsage: 0.875, model.PrefixHitGauge: 0.412, model.KVCapacityTokens: 470080,
	})
	if s[0].Source != model.FromLog || s[0].Endpoint != "http://e" || s[0].Model != "m" {
		t.Errorf("sample identity %+v", s[0])
	}
	if _, ok := s[1].Gauges[model.Deferred]; ok {
		t.Error("Deferred absent from the line must stay absent")
	}
	for i, want := range []float64{2, 2, 7} {
		if got := s[i].Counters[model.Preemptions]; got != want {
			t.Errorf("sample %d preemptions = %v, want %v (cumulative)", i, got, want)
		}
	}
	if s[2].Counters[model.SpecAcceptTokens] != 401 || s[2].Counters[model.SpecDraftTokens] != 900 || !near(s[2].Gauges[model.SpecAcceptGauge], 0.446) {
		t.Errorf("spec decode: %v %v", s[2].Counters, s[2].Gauges)
	}
}

func TestVLLMStatsOldFormats(t *testing.T) {
	s := feedLines(t,
		"INFO 01-10 12:00:01 metrics.py:455] Avg prompt throughput: 512.0 tokens/s, Avg generation throughput: 64.3 tokens/s, Running: 7 reqs, Swapped: 1 reqs, Pending: 5 reqs, GPU KV cache usage: 91.2%, CPU KV cache usage: 0.0%.",
	)
	if len(s) != 1 {
		t.Fatalf("%d samples", len(s))
	}
	wantGauges(t, s[0], map[model.Gauge]float64{model.Running: 7, model.Waiting: 5, model.KVUsage: 0.912, model.GenTPSGauge: 64.3})
	if _, ok := s[0].Counters[model.Preemptions]; ok {
		t.Error("V0 stats line says nothing about preemptions")
	}
	if _, ok := s[0].Gauges[model.PrefixHitGauge]; ok {
		t.Error("V0 has no prefix hit rate on the line")
	}
	// Early V1: no KV part at all; KV must be absent, not 0.
	s = feedLines(t, "INFO 02-01 09:00:00 [loggers.py:80] Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs ")
	if len(s) != 1 {
		t.Fatalf("%d samples", len(s))
	}
	if _, ok := s[0].Gauges[model.KVUsage]; ok {
		t.Error("KV usage invented")
	}
	wantGauges(t, s[0], map[model.Gauge]float64{model.Running: 1, model.Waiting: 0})
	// A fork printing "n/a" leaves the gauge absent.
	s = feedLines(t, "Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: n/a, Prefix cache hit rate: n/a")
	if _, ok := s[0].Gauges[model.PrefixHitGauge]; ok {
		t.Error("n/a must be absent")
	}
}

func TestVLLMDataParallelRounds(t *testing.T) {
	line := func(e string, run int) string {
		return "INFO 08-14 12:00:01 [loggers.py:259] Engine " + e + ": Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 100.0 tokens/s, Running: " +
			strconv.Itoa(run) + " reqs, Waiting: 1 reqs, GPU KV cache usage: " + strconv.Itoa(run*10) + ".0%, Prefix cache hit rate: 0.0%"
	}
	s := feedLines(t, line("000", 2), line("001", 4), line("000", 3), line("001", 5), line("000", 6))
	// The first line is a round of one (engine 1 not known yet); then each
	// later pair is a round.
	if len(s) != 3 {
		t.Fatalf("%d samples, want 3", len(s))
	}
	wantGauges(t, s[1], map[model.Gauge]float64{model.Running: 7, model.Waiting: 2, model.GenTPSGauge: 200, model.KVUsage: 0.35})
	wantGauges(t, s[2], map[model.Gauge]float64{model.Running: 11, model.KVUsage: 0.55})
	if !strings.Contains(strings.Join(s[2].Notes, " "), "2 data-parallel engines") {
		t.Errorf("notes %v", s[2].Notes)
	}
}

func TestSGLangBatchLines(t *testing.T) {
	s := feedLines(t,
		"[2026-08-22 10:00:00 TP0] Prefill batch, #new-seq: 2, #new-token: 1024, #cached-token: 512, token usage: 0.35, #running-req: 6, #queue-req: 3, #pending-token: 2048, cuda graph: False, input throughput (token/s): 8421.33",
		"[2026-08-22 10:00:02 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_tokens_gained: 2048, #new_token_ratio: 0.4000 -> 0.5000",
		"[2026-08-22 10:00:01 DP0 TP0 EP0 PP0] Decode batch, #running-req: 32, #token: 45000, token usage: 0.62, cuda graph: True, gen throughput (token/s): 1843.21, #queue-req: 4",
		"[2026-08-22 10:00:01] Decode batch [1234], #running-req: 8, #full token: 9000, full token usage: 0.40, #swa token: 800, swa token usage: 0.10, accept len: 2.10, accept rate: 0.55, cuda graph: True, gen throughput (token/s): 300.00, #queue-req: 0",
	)
	if len(s) != 3 {
		t.Fatalf("%d samples", len(s))
	}
	wantGauges(t, s[0], map[model.Gauge]float64{model.Running: 6, model.Waiting: 3, model.KVUsage: 0.35, model.PromptTPSGauge: 8421.33})
	if _, ok := s[0].Gauges[model.GenTPSGauge]; ok {
		t.Error("no decode line yet: gen throughput unknown")
	}
	if s[0].Counters[model.PrefixQueries] != 1536 || s[0].Counters[model.PrefixHits] != 512 {
		t.Errorf("prefix counters %v", s[0].Counters)
	}
	wantGauges(t, s[1], map[model.Gauge]float64{model.Running: 32, model.Waiting: 4, model.KVUsage: 0.62, model.GenTPSGauge: 1843.21, model.PromptTPSGauge: 8421.33})
	if s[1].Counters[model.Preemptions] != 3 {
		t.Errorf("retractions %v", s[1].Counters)
	}
	wantGauges(t, s[2], map[model.Gauge]float64{model.Running: 8, model.KVUsage: 0.40, model.SpecAcceptGauge: 0.55})
}

func TestSGLangStaleThroughputDropped(t *testing.T) {
	st := newStatsState("", "")
	at := time.Date(2026, 8, 22, 10, 0, 0, 0, time.UTC)
	pre := "Prefill batch, #new-seq: 1, #new-token: 10, #cached-token: 0, token usage: 0.10, #running-req: 1, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 100.00"
	dec := "Decode batch, #running-req: 1, #token: 10, token usage: 0.10, cuda graph: True, gen throughput (token/s): 50.00, #queue-req: 0"
	mt, _ := DefaultMatcher.Match(pre)
	st.feed(mt, pre, at)
	mt, _ = DefaultMatcher.Match(dec)
	s := st.feed(mt, dec, at.Add(time.Minute))
	if _, ok := s[0].Gauges[model.PromptTPSGauge]; ok {
		t.Error("a prefill throughput a minute old must not be carried on")
	}
}

func TestLlamaCppTiming(t *testing.T) {
	s := feedLines(t,
		"srv          init: initializing, n_slots = 4, n_ctx_slot = 8192, kv_unified = 'true'",
		"slot print_timing: id  0 | task 12 | prompt eval time =     123.45 ms /    57 tokens (    2.17 ms per token,   461.74 tokens per second)",
		"slot print_timing: id  0 | task 12 |        eval time =    2100.00 ms /   128 tokens (   16.41 ms per token,    60.95 tokens per second)",
		"slot print_timing: id  0 | task 12 |       total time =    2223.45 ms /   185 tokens",
		"slot print_timing: id  1 | task 13 |       total time =      10.00 ms /     5 tokens", // began before we followed
	)
	if len(s) != 1 {
		t.Fatalf("%d samples", len(s))
	}
	sm := s[0]
	if sm.Counters[model.Requests] != 1 || sm.Counters[model.PromptTokens] != 57 || sm.Counters[model.GenTokens] != 128 {
		t.Errorf("counters %v", sm.Counters)
	}
	if h := sm.Latencies[model.TPOT]; h.Count != 1 || !near(h.Sum, 2.1/128) || h.Approx == "" {
		t.Errorf("tpot %+v", h)
	}
	if h := sm.Latencies[model.E2E]; !near(h.Sum, 2.22345) {
		t.Errorf("e2e %+v", h)
	}
	wantGauges(t, sm, map[model.Gauge]float64{model.MaxRunning: 4})
	if len(sm.Gauges) != 1 {
		t.Errorf("per-request timings must not become server gauges: %v", sm.Gauges)
	}
}

func TestLeadingNum(t *testing.T) {
	for in, want := range map[string]float64{"87.5%": 87.5, "12 reqs": 12, "470,080 tokens": 470080, "0.0%.": 0, " 3": 3} {
		if got, ok := leadingNum(in); !ok || got != want {
			t.Errorf("%q → %v %v", in, got, ok)
		}
	}
	for _, in := range []string{"n/a", "", "active 12%"} {
		if _, ok := leadingNum(in); ok {
			t.Errorf("%q parsed", in)
		}
	}
}

// An engine that stops printing (idle vLLM logs its stats at DEBUG) is
// dropped from the sum after three of its intervals.
func TestVLLMDataParallelIdleEngineExpires(t *testing.T) {
	st := newStatsState("", "")
	at := time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)
	line := func(e string, run int) string {
		return "Engine " + e + ": Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 1.0 tokens/s, Running: " + strconv.Itoa(run) + " reqs, Waiting: 0 reqs"
	}
	feed := func(l string, t time.Time) []model.Sample {
		mt, _ := DefaultMatcher.Match(l)
		return st.feed(mt, l, t)
	}
	feed(line("000", 1), at)
	feed(line("001", 2), at.Add(time.Second))
	feed(line("000", 1), at.Add(10*time.Second))
	feed(line("001", 2), at.Add(11*time.Second))
	// Engine 1 goes quiet; engine 0 keeps printing every 10 s.
	var last []model.Sample
	for i := 2; i < 8; i++ {
		if s := feed(line("000", 5), at.Add(time.Duration(i)*10*time.Second)); len(s) > 0 {
			last = s
		}
	}
	if len(last) == 0 || last[len(last)-1].Gauges[model.Running] != 5 {
		t.Fatalf("idle engine still summed: %+v", last)
	}
}

func TestOllamaAccessLog(t *testing.T) {
	lines := []string{
		model.SanitizeLine([]byte("[GIN] 2026/08/21 - 10:00:00 |\x1b[97;42m 200 \x1b[0m|    2.5012ms |       127.0.0.1 |\x1b[97;46m POST    \x1b[0m \"/api/generate\"")),
		`[GIN] 2026/08/21 - 10:00:01 | 200 |      1.5s |       127.0.0.1 | GET      "/api/ps"`, // a monitor's poll: not a request to count
		`[GIN] 2026/08/21 - 10:00:02 | 200 |  3.4975s |       127.0.0.1 | POST     "/api/chat"`,
		`[GIN] 2026/08/21 - 10:00:03 | 404 |   120µs |       127.0.0.1 | POST     "/api/chat"`,
	}
	s := feedLines(t, lines...)
	if len(s) != 4 {
		t.Fatalf("%d samples, want 4 (the /api/ps poll's with the counts unchanged)", len(s))
	}
	if poll := s[1]; poll.Counters[model.Requests] != 1 || len(poll.Observations) != 0 {
		t.Errorf("the /api/ps poll counted as a request: counters %v, observations %v", poll.Counters, poll.Observations)
	}
	last := s[3]
	if last.Counters[model.Requests] != 3 || last.Counters[model.RequestErrors] != 1 {
		t.Errorf("counters %v", last.Counters)
	}
	if h := last.Latencies[model.E2E]; h.Count != 2 || !near(h.Sum, 0.0025012+3.4975) {
		t.Errorf("e2e %+v", h)
	}
	at := lineTime(lines[0], time.Date(2026, 8, 21, 12, 0, 0, 0, time.UTC), time.UTC)
	if !at.Equal(time.Date(2026, 8, 21, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("gin timestamp %v", at)
	}
}

// A negative latency in Ollama's access log is no request's: it is left
// out, not summed into the mean (it made "E2E mean -3000 ms").
func TestStatsRejectNegativeLatency(t *testing.T) {
	s := feedLines(t,
		`[GIN] 2026/08/21 - 10:00:00 | 200 |  -3000ms |       127.0.0.1 | POST     "/api/chat"`,
		`[GIN] 2026/08/21 - 10:00:01 | 200 |       2s |       127.0.0.1 | POST     "/api/chat"`)
	if len(s) != 2 {
		t.Fatalf("%d samples", len(s))
	}
	h := s[1].Latencies[model.E2E]
	if h.Count != 1 || h.Sum != 2 {
		t.Errorf("E2E sum %v count %v, want 2 s over 1 request", h.Sum, h.Count)
	}
}
