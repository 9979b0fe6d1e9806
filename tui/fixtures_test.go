package tui

import (
	"fmt"
	"math"
	"time"

	"github.com/llmtop/llmtop/model"
)

// t0 pins every test clock.
var t0 = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

const testURL = "http://127.0.0.1:8000"

var (
	ttftBounds = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBounds  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	reqBounds  = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// hist is a cumulative histogram being built.
type hist struct {
	bounds []float64
	counts []float64 // per bucket (not cumulative), last is +Inf
	sum    float64
}

func newHist(b []float64) *hist { return &hist{bounds: b, counts: make([]float64, len(b)+1)} }

// observe adds n observations spread evenly between lo and hi seconds.
func (h *hist) observe(lo, hi float64, n int) {
	for i := 0; i < n; i++ {
		v := lo + (hi-lo)*float64(i)/float64(max(1, n-1))
		j := len(h.bounds)
		for k, b := range h.bounds {
			if v <= b {
				j = k
				break
			}
		}
		h.counts[j]++
		h.sum += v
	}
}

func (h *hist) snapshot() model.Histogram {
	out := model.Histogram{Sum: h.sum}
	c := 0.0
	for i, b := range h.bounds {
		c += h.counts[i]
		out.Buckets = append(out.Buckets, model.Bucket{UpperBound: b, Count: c})
	}
	c += h.counts[len(h.bounds)]
	out.Buckets = append(out.Buckets, model.Bucket{UpperBound: math.Inf(1), Count: c})
	out.Count = c
	return out
}

// load describes one second of traffic.
type load struct {
	running, waiting, kv    float64
	reqs                    int
	ttftLo, ttftHi          float64
	itlLo, itlHi            float64
	queueLo, queueHi        float64
	prefillLo, prefillHi    float64
	decodeLo, decodeHi      float64
	promptPerReq, genPerReq float64
	preempt                 float64
	stopShare, lengthShare  float64
}

var healthy = func(i int) load {
	return load{running: 12 + float64(i%5), waiting: 0, kv: 0.42 + 0.01*float64(i%10), reqs: 4,
		ttftLo: 0.03, ttftHi: 0.09, itlLo: 0.012, itlHi: 0.022, queueLo: 0.001, queueHi: 0.004,
		prefillLo: 0.03, prefillHi: 0.08, decodeLo: 1.5, decodeHi: 3, promptPerReq: 800, genPerReq: 200,
		stopShare: 0.85, lengthShare: 0.15}
}

var stressed = func(i int) load {
	return load{running: 256, waiting: float64(i / 3), kv: 0.97, reqs: 3,
		ttftLo: 0.4, ttftHi: 3.5, itlLo: 0.04, itlHi: 0.09, queueLo: 0.3, queueHi: 3, prefillLo: 0.1, prefillHi: 0.4,
		decodeLo: 5, decodeHi: 12, promptPerReq: 2000, genPerReq: 300, preempt: 0.5, stopShare: 0.6, lengthShare: 0.3}
}

// scrapes builds n one-second scrapes of a vLLM endpoint under load f.
func scrapes(n int, f func(int) load) []model.Scrape {
	ttft, itl, tpot := newHist(ttftBounds), newHist(itlBounds), newHist(itlBounds)
	e2e, queue, prefill, decode := newHist(reqBounds), newHist(reqBounds), newHist(reqBounds), newHist(reqBounds)
	var prompt, gen, reqs, pre, pq, ph, stop, length, abort float64
	id := model.Identity{Engine: model.VLLM, Version: "0.11.0", Health: model.HealthUp,
		Models: []model.ModelInfo{{ID: "Qwen/Qwen3-8B", MaxContext: 32768}}}
	out := make([]model.Scrape, 0, n)
	for i := 0; i < n; i++ {
		l := f(i)
		tm := t0.Add(time.Duration(i) * time.Second)
		ttft.observe(l.ttftLo, l.ttftHi, l.reqs*5)
		itl.observe(l.itlLo, l.itlHi, l.reqs*50)
		tpot.observe(l.itlLo, l.itlHi, l.reqs*5)
		e2e.observe(l.queueLo+l.prefillLo+l.decodeLo, l.queueHi+l.prefillHi+l.decodeHi, l.reqs*5)
		queue.observe(l.queueLo, l.queueHi, l.reqs*5)
		prefill.observe(l.prefillLo, l.prefillHi, l.reqs*5)
		decode.observe(l.decodeLo, l.decodeHi, l.reqs*5)
		r := float64(l.reqs)
		prompt += r * l.promptPerReq
		gen += r * l.genPerReq
		reqs += r
		pre += l.preempt
		pq += r * l.promptPerReq
		ph += r * l.promptPerReq * 0.4
		stop += r * l.stopShare
		length += r * l.lengthShare
		abort += r * (1 - l.stopShare - l.lengthShare)
		sm := model.NewSample(testURL, "Qwen/Qwen3-8B", tm, model.FromScrape)
		sm.Gauges[model.Running], sm.Gauges[model.Waiting], sm.Gauges[model.KVUsage] = l.running, l.waiting, l.kv
		sm.Gauges[model.KVCapacityTokens] = 412000
		sm.Counters[model.PromptTokens], sm.Counters[model.GenTokens], sm.Counters[model.Requests] = prompt, gen, reqs
		sm.Counters[model.Preemptions], sm.Counters[model.PrefixQueries], sm.Counters[model.PrefixHits] = pre, pq, ph
		sm.FinishReasons["stop"], sm.FinishReasons["length"], sm.FinishReasons["abort"] = stop, length, abort
		sm.Latencies[model.TTFT], sm.Latencies[model.ITL], sm.Latencies[model.TPOT] = ttft.snapshot(), itl.snapshot(), tpot.snapshot()
		sm.Latencies[model.E2E], sm.Latencies[model.Queue] = e2e.snapshot(), queue.snapshot()
		sm.Latencies[model.Prefill], sm.Latencies[model.Decode] = prefill.snapshot(), decode.snapshot()
		sm.Started = t0.Add(-2 * time.Hour)
		out = append(out, model.Scrape{Endpoint: testURL, Time: tm, Took: 4 * time.Millisecond, Identity: id, Samples: []model.Sample{sm}})
	}
	return out
}

// gpus builds a snapshot of n H100s; hot makes them throttle.
func gpus(n int, at time.Time, hot bool) model.GPUSnapshot {
	s := model.GPUSnapshot{Time: at, Driver: "550.54.15", CUDA: "12.4"}
	for i := 0; i < n; i++ {
		g := model.GPU{Index: i, UUID: fmt.Sprintf("GPU-%08d", i), Name: "NVIDIA H100 80GB HBM3",
			Util: model.Some(91 - float64(i)), MemUsed: model.Some(71.5 * (1 << 30)), MemTotal: model.Some(80 * (1 << 30)),
			Power: model.Some(612 - 3*float64(i)), PowerLimit: model.Some(700), Temp: model.Some(64 + float64(i))}
		g.Processes = []model.GPUProcess{{PID: 4242, Name: "python3", UsedMem: model.Some(70 * (1 << 30)), Engine: "vllm"},
			{PID: 777, Name: "jupyter", UsedMem: model.Some(1.5 * (1 << 30))}}
		if hot {
			g.Temp = model.Some(88 + float64(i%3))
			g.Throttle = []string{"power cap"}
			g.Util = model.Some(99)
		}
		s.GPUs = append(s.GPUs, g)
	}
	return s
}

// events adds a few representative events and log lines.
func feedLogs(m *Model, at time.Time, stressedLogs bool) {
	lines := []string{
		"INFO 11-22 04:01:55 [loggers.py:123] Engine 000: Avg prompt throughput: 3200.0 tokens/s, Avg generation throughput: 800.0 tokens/s, Running: 12 reqs, Waiting: 0 reqs, GPU KV cache usage: 45.1%, Prefix cache hit rate: 40.0%",
		"INFO:     127.0.0.1:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
	}
	for i, l := range lines {
		m.Update(model.LogLine{Time: at.Add(time.Duration(i) * time.Millisecond), Endpoint: testURL, Text: l})
	}
	if stressedLogs {
		for i := 0; i < 3; i++ {
			ev := model.Event{Time: at.Add(time.Duration(i) * time.Second), Endpoint: testURL, Source: "log", Kind: "preempted",
				Severity: model.SevWarn, Category: "memory", Title: "sequence preempted: not enough KV cache space"}
			m.Update(model.LogLine{Time: ev.Time, Endpoint: testURL, Text: "WARNING scheduler.py:1480 Sequence group 42 is preempted by PreemptionMode.RECOMPUTE", Event: &ev})
		}
	}
}
