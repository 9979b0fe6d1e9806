package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// traffic is a background workload: Poisson arrivals, log-normal prompt and
// output lengths, a share of requests opening with one of a few shared
// system prompts (what prefix caching feeds on), and optionally a share of
// long documents.
type traffic struct {
	rate                    float64 // requests/s
	promptMean, promptSigma float64 // tokens; sigma of the log-normal
	outMean, outSigma       float64
	shareFrac               float64 // share of requests with a shared prefix
	prefixes, prefixLen     int     // how many shared prefixes, tokens each
	longFrac, longMean      float64 // share and mean length of long prompts
	ramp                    time.Duration
	// fill: for this long after the engine comes up, arrivals come fillX
	// times faster, as a load test's first burst fills the batch (a
	// decode-bound batch otherwise takes a whole request lifetime to build).
	fill  time.Duration
	fillX float64
}

// maxBackgroundRate keeps the generator cheap on a shared machine.
const maxBackgroundRate = 80

// chat is a chat workload at load × the engine's estimated capacity.
func chat(c engineConfig, p kvPlan, load float64) traffic {
	t := traffic{promptMean: 500, promptSigma: 0.6, outMean: 220, outSigma: 0.6, shareFrac: 0.6, prefixes: 4, prefixLen: 384}
	t.rate = load * t.capacity(c, p)
	return t
}

func (t traffic) meanPrompt() float64 { return t.promptMean*(1-t.longFrac) + t.longMean*t.longFrac }

// capacity estimates the sustainable request rate: as many sequences as
// --max-num-seqs and the KV pool allow, decoding together.
func (t traffic) capacity(c engineConfig, p kvPlan) float64 {
	ctx := t.meanPrompt() + t.outMean
	b := min(float64(c.maxNumSeqs), 0.9*float64(p.tokens)/ctx)
	return t.rateFor(c, p, b)
}

// rateFor is the arrival rate that keeps about b sequences busy: each
// request costs its share of b-wide decode steps plus its prefill.
func (t traffic) rateFor(c engineConfig, _ kvPlan, b float64) float64 {
	if b < 1 {
		b = 1
	}
	ph := newPhysics(c.model, c.gpu, c.fp8)
	step := ph.stepTime(0, int(b), int(b*(t.meanPrompt()+t.outMean/2)))
	perReq := t.outMean*step.Seconds()/b + t.meanPrompt()/ph.prefillRate
	return min(maxBackgroundRate, 1/perReq)
}

// steadyRate is the arrival rate that keeps about b sequences decoding,
// with each step's prompt tokens counted: the new requests' prefill rides in
// the decode steps and lengthens them once it outweighs the weight read.
// Solved by fixed-point iteration (rate → prompt tokens per step → step).
func (t traffic) steadyRate(c engineConfig, b float64) float64 {
	b = max(b, 1)
	ph := newPhysics(c.model, c.gpu, c.fp8)
	kv := int(b * (t.meanPrompt() + t.outMean/2))
	step := ph.stepTime(0, int(b), kv).Seconds()
	var rate float64
	for range 30 {
		rate = b / (t.outMean * step)
		step = ph.stepTime(int(rate*t.meanPrompt()*step), int(b), kv).Seconds()
	}
	return min(maxBackgroundRate, rate)
}

func logNormal(rng *rand.Rand, mean, sigma float64) float64 {
	mu := math.Log(mean) - sigma*sigma/2
	return math.Exp(mu + sigma*rng.NormFloat64())
}

// mix is splitmix64's finalizer: a cheap, well-spread hash step.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31) | 1 // never 0: 0 marks a private block
}

// chainHashes hashes n blocks whose contents are content(j), each hash
// covering the whole prefix up to its block, as vLLM's block hashes do.
func chainHashes(n int, content func(j int) uint64) []uint64 {
	out := make([]uint64, n)
	var h uint64
	for j := range out {
		h = mix(h ^ content(j))
		out[j] = h
	}
	return out
}

// SetTrafficScale changes the background arrival rate's multiplier while
// the sim runs (a router in front, sim.Fleet, shifts its share of the
// traffic); 0 stops the arrivals until it rises again.
func (s *Sim) SetTrafficScale(f float64) {
	s.mu.Lock()
	s.runUntil(s.clock.Now())
	was := s.user.TrafficScale
	s.user.TrafficScale = max(f, 0)
	if was <= 0 && f > 0 && s.phase == phaseUp && s.user.Background {
		s.arrival = s.nextArrivalAfter(s.now)
	}
	s.mu.Unlock()
	s.poke()
}

// SetKVTransfer changes a decode engine's mean KV hand-over while it runs.
func (s *Sim) SetKVTransfer(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user.KVTransfer = d
	if s.cfg.pd == PDDecode {
		s.cfg.kvXfer = d
	}
}

// Gauges are the engine's running and waiting requests now (a router in
// front counts them per engine).
func (s *Sim) Gauges() (running, waiting int, up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runUntil(s.clock.Now())
	if s.phase != phaseUp || s.eng == nil {
		return 0, 0, false
	}
	return len(s.eng.running), s.eng.waitq.Len(), true
}

// nextArrival draws the next Poisson arrival after now.
func (s *Sim) nextArrivalAfter(now time.Time) time.Time {
	rate := s.traffic.rate
	if s.user.Rate > 0 {
		rate = s.user.Rate
	}
	rate *= s.user.TrafficScale
	if s.traffic.ramp > 0 {
		if f := now.Sub(s.upAt).Seconds() / s.traffic.ramp.Seconds(); f < 1 {
			rate *= max(f, 0.05)
		}
	}
	if s.traffic.fill > 0 && now.Sub(s.upAt) < s.traffic.fill {
		rate *= s.traffic.fillX
	}
	if rate <= 0 {
		return time.Time{}
	}
	return now.Add(time.Duration(s.rng.ExpFloat64() / rate * float64(time.Second)))
}

// backgroundRequest draws one request of the current workload.
func (s *Sim) backgroundRequest() *request {
	t, c := s.traffic, s.cfg
	s.reqSeq++
	r := &request{id: "bg-" + itoa(s.reqSeq), seq: s.reqSeq}
	mean := t.promptMean
	if t.longFrac > 0 && s.rng.Float64() < t.longFrac {
		mean = t.longMean
	}
	prompt := int(logNormal(s.rng, mean, t.promptSigma))
	out := max(1, int(logNormal(s.rng, t.outMean, t.outSigma)))
	prompt = max(4, min(prompt, c.maxModelLen-out-1))
	if prompt+out >= c.maxModelLen {
		out = max(1, c.maxModelLen-prompt-1)
	}
	r.prompt = prompt
	if c.loras > 0 {
		r.lora = "adapter-" + itoa(uint64(s.rng.IntN(c.loras)))
	}
	shared, group := false, 0
	if t.prefixes > 0 && s.rng.Float64() < t.shareFrac {
		shared, group = true, s.rng.IntN(t.prefixes)
		r.prompt = max(r.prompt, t.prefixLen+4)
	}
	seq, bs := s.reqSeq, c.blockSize
	r.hashes = chainHashes(r.prompt/bs, func(j int) uint64 {
		if shared && (j+1)*bs <= t.prefixLen {
			return uint64(group)<<32 | uint64(j) | 1<<62
		}
		return seq<<20 | uint64(j)
	})
	// Four in five stop on their own (EOS); the rest hit max_tokens. A
	// prefill instance generates the first token only (the proxy in front
	// asks max_tokens 1 and sends the rest to decode).
	if s.cfg.pd == PDPrefill {
		r.maxTokens, r.target = 1, 1
	} else if s.rng.IntN(5) == 0 {
		r.maxTokens, r.target = out, out+1
	} else {
		r.maxTokens, r.target = min(2*out+16, c.maxModelLen-r.prompt), out
	}
	return r
}
