package sim

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Scenario names.
const (
	Healthy       = "healthy"
	QueueBuildup  = "queue-buildup"
	KVPressure    = "kv-pressure"
	LongPrompts   = "long-prompts"
	DecodeBound   = "decode-bound"
	ColdStart     = "cold-start"
	CrashRestart  = "crash-restart"
	OOMAtStart    = "oom-at-start"
	MetricsBroken = "metrics-broken"
	APIServerCPU  = "api-server-cpu"
	LoRAStarved   = "lora-starved"
)

// frontCPU is the api-server-cpu scenario's fault.
const frontCPU = "front-cpu"

// DemoTimeline is what `llmtop demo` cycles through. Its first segment
// is two to the screen: the engine alone, then (DemoRouted) a routed
// fleet beside it, the engine still serving its healthy traffic.
const DemoTimeline = "healthy:140s,queue-buildup:60s,kv-pressure:75s,long-prompts:60s,decode-bound:50s,crash-restart:45s,metrics-broken:40s"

// scenario is one named behaviour: engine flags it needs (applied only to
// flags the user did not set), background traffic, and faults.
type scenario struct {
	name    string
	summary string
	engine  func(c Config, m ModelSpec, g GPUSpec) Config
	traffic func(c engineConfig, p kvPlan) traffic
	faults  []string // crash, oom, metrics
}

var scenarios = map[string]scenario{
	Healthy: {name: Healthy, summary: "moderate chat traffic at ~35% of capacity, shared system prompts (prefix-cache hits)",
		traffic: func(c engineConfig, p kvPlan) traffic { return chat(c, p, 0.35) }},
	QueueBuildup: {name: QueueBuildup, summary: "--max-num-seqs 32 and arrivals at 2.2x capacity: running pinned at the cap, waiting grows, queue time dominates TTFT",
		engine:  func(c Config, _ ModelSpec, _ GPUSpec) Config { return c.merge(Config{MaxNumSeqs: 32}) },
		traffic: func(c engineConfig, p kvPlan) traffic { return chat(c, p, 2.2) }},
	KVPressure: {name: KVPressure, summary: "--gpu-memory-utilization lowered to a ~48k-token pool, --max-model-len 32768, long outputs: KV > 95%, preemptions",
		engine: func(c Config, m ModelSpec, g GPUSpec) Config {
			util := (m.WeightsBytes + nonKVOverhead + 48000*m.kvBytesPerToken(false)) / g.VRAM
			return c.merge(Config{GPUMemoryUtil: math.Ceil(util*100) / 100, MaxModelLen: min(32768, m.MaxModelLen), MaxNumSeqs: 256})
		},
		traffic: func(c engineConfig, p kvPlan) traffic {
			t := traffic{promptMean: 800, promptSigma: 0.5, outMean: 1500, outSigma: 0.3, shareFrac: 0.3, prefixes: 4, prefixLen: 256}
			t.rate = t.rateFor(c, p, 3*float64(p.tokens)/(t.promptMean+t.outMean/2))
			return t
		}},
	LongPrompts: {name: LongPrompts, summary: "--no-enable-chunked-prefill, --max-model-len 16384, 30% of prompts ~9k tokens: prefill-dominated TTFT, ITL spikes (with --enable-chunked-prefill: 2048-token chunks)",
		engine: func(c Config, m ModelSpec, _ GPUSpec) Config {
			if c.ChunkedPrefill != nil && *c.ChunkedPrefill {
				// the fix being tried: chunks small enough to interleave with decodes
				return c.merge(Config{MaxModelLen: min(16384, m.MaxModelLen), MaxNumBatchedTokens: 2048})
			}
			return c.merge(Config{ChunkedPrefill: ptr(false), MaxModelLen: min(16384, m.MaxModelLen)})
		},
		traffic: func(c engineConfig, p kvPlan) traffic {
			t := chat(c, p, 0.7)
			t.longFrac, t.longMean = 0.3, min(9000, float64(c.maxModelLen)*0.55)
			t.rate = 0.7 * t.capacity(c, p)
			return t
		}},
	DecodeBound: {name: DecodeBound, summary: "--max-num-seqs 1024 nearly full (~900 running) with 64-token prompts and 300-token outputs: ITL/TPOT over 50 ms from the batch size while KV is half free",
		engine: func(c Config, _ ModelSpec, _ GPUSpec) Config { return c.merge(Config{MaxNumSeqs: 1024}) },
		traffic: func(c engineConfig, p kvPlan) traffic {
			// Arrivals for 85 % of the cap (KV allowing): this close to
			// saturation the batch swings up to the cap at times.
			t := traffic{promptMean: 64, promptSigma: 0.4, outMean: 300, outSigma: 0.3}
			b := min(0.85*float64(c.maxNumSeqs), 0.6*float64(p.tokens)/(t.promptMean+t.outMean/2))
			t.rate = t.steadyRate(c, b)
			t.fill, t.fillX = 4*time.Second, 3 // a burst first: the batch fills in seconds, not a request's lifetime
			return t
		}},
	ColdStart: {name: ColdStart, summary: "a 45 s start (connection refused, startup log lines), then traffic ramps up over a minute on an empty prefix cache",
		engine: func(c Config, _ ModelSpec, _ GPUSpec) Config { return c.merge(Config{StartupTime: 45 * time.Second}) },
		traffic: func(c engineConfig, p kvPlan) traffic {
			t := chat(c, p, 0.35)
			t.ramp = time.Minute
			return t
		}, faults: []string{"restart"}},
	CrashRestart: {name: CrashRestart, summary: "after 15 s the engine dies (CUDA illegal memory access, /health 503), exits (connection refused), restarts with counters reset",
		traffic: func(c engineConfig, p kvPlan) traffic { return chat(c, p, 0.35) }, faults: []string{"crash"}},
	OOMAtStart: {name: OOMAtStart, summary: "--gpu-memory-utilization 0.98: with 1024 --max-num-seqs on an 80 GB GPU the sampler warm-up (1.5 MiB per sequence) does not fit the memory left outside vLLM's share; the start fails with CUDA OOM, retried every 30 s (--max-num-seqs 512 or a lower utilization starts)",
		engine:  func(c Config, _ ModelSpec, _ GPUSpec) Config { return c.merge(Config{GPUMemoryUtil: 0.98}) },
		traffic: func(c engineConfig, p kvPlan) traffic { return chat(c, p, 0.35) }, faults: []string{"oom"}},
	WrongTemplate: {name: WrongTemplate, summary: "the chat template renders the bare message text without the model's special tokens (as /tokenize shows); greedy answers never meet EOS and run to max_tokens",
		traffic: func(c engineConfig, p kvPlan) traffic { return chat(c, p, 0.35) }, faults: []string{WrongTemplate}},
	IgnoresTemperature: {name: IgnoresTemperature, summary: "the sampler ignores temperature 0: two identical requests answer differently",
		traffic: func(c engineConfig, p kvPlan) traffic { return chat(c, p, 0.35) }, faults: []string{IgnoresTemperature}},
	LoRAStarved: {name: LoRAStarved, summary: "requests spread over 8 LoRA adapters with --max-loras 2: most wait deferred for an adapter slot while KV is mostly free and the batch under its cap",
		engine:  func(c Config, _ ModelSpec, _ GPUSpec) Config { return c.merge(Config{LoRAAdapters: 8, MaxLoRAs: 2}) },
		traffic: func(c engineConfig, p kvPlan) traffic { return chat(c, p, 0.6) }},
	APIServerCPU: {name: APIServerCPU, summary: "the API server's thread (named " + FrontThreadName + ") burns a whole real core tokenising; each request waits 15 ms of it before the engine sees it: clients wait while the engine and the GPU idle",
		traffic: func(c engineConfig, p kvPlan) traffic { return chat(c, p, 0.05) }, faults: []string{frontCPU}},
	MetricsBroken: {name: MetricsBroken, summary: "/metrics answers 404, then 500, then garbage, 15 s each, while serving normally",
		traffic: func(c engineConfig, p kvPlan) traffic { return chat(c, p, 0.35) }, faults: []string{"metrics"}},
}

func ptr[T any](v T) *T { return &v }

// ScenarioNames lists the scenarios, sorted.
func ScenarioNames() []string {
	var out []string
	for k := range scenarios {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ScenarioSummary says what a scenario does, for --help and docs.
func ScenarioSummary(name string) string { return scenarios[name].summary }

// segment is one stretch of the timeline.
type segment struct {
	names []string
	dur   time.Duration // 0 = forever
}

// parseTimeline reads "healthy:60s,queue-buildup+metrics-broken:2m,crash-restart".
func parseTimeline(s string) ([]segment, error) {
	if strings.TrimSpace(s) == "" {
		s = Healthy
	}
	var out []segment
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		var seg segment
		name, dur, hasDur := strings.Cut(part, ":")
		if hasDur {
			d, err := time.ParseDuration(dur)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("scenario segment %q: bad duration %q (use e.g. 90s or 2m)", part, dur)
			}
			seg.dur = d
		}
		for _, n := range strings.Split(name, "+") {
			n = strings.TrimSpace(n)
			if _, ok := scenarios[n]; !ok {
				return nil, fmt.Errorf("unknown scenario %q (known: %s)", n, strings.Join(ScenarioNames(), ", "))
			}
			seg.names = append(seg.names, n)
		}
		if seg.dur == 0 && i < len(strings.Split(s, ","))-1 {
			return nil, fmt.Errorf("scenario segment %q needs a duration: only the last segment may run forever", part)
		}
		out = append(out, seg)
	}
	return out, nil
}

func (seg segment) has(fault string) bool {
	for _, n := range seg.names {
		for _, f := range scenarios[n].faults {
			if f == fault {
				return true
			}
		}
	}
	return false
}

// config applies the segment's engine needs to the user's config.
func (seg segment) config(user Config) (Config, error) {
	// base is only the model and the GPU the scenario sizes its flags for:
	// the user's flags are checked once merged with the scenario's.
	probe := Config{Model: user.Model, GPU: user.GPU, ServedModelName: user.ServedModelName}
	base, err := probe.resolve()
	if err != nil {
		return user, err
	}
	c := user
	for _, n := range seg.names {
		if f := scenarios[n].engine; f != nil {
			c = f(c, base.model, base.gpu)
		}
	}
	return c, nil
}

// traffic is the last traffic profile among the segment's scenarios that
// sets one (so "healthy+metrics-broken" and "metrics-broken+healthy" agree).
func (seg segment) traffic(c engineConfig, p kvPlan) traffic {
	// (called with the segment's demand: see Sim.demand)
	var t traffic
	for _, n := range seg.names {
		if f := scenarios[n].traffic; f != nil && (t.rate == 0 || n != Healthy) {
			t = f(c, p)
		}
	}
	return t
}
