package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Version is the vLLM version the sim reports (its metric set and log
// formats follow vLLM main of 2026-08, see docs/sim.md).
const Version = "0.30.0"

// phase is where the simulated server process is in its life.
type phase int

const (
	phaseLoading phase = iota // process starting: nothing listens yet
	phaseUp                   // serving
	phaseDead                 // engine core died: API answers, /health 503
	phaseDown                 // process gone: connection refused
)

// Sim is a simulated vLLM server. Its methods are safe from any goroutine.
type Sim struct {
	mu    sync.Mutex
	user  Config
	clock Clock
	fake  *FakeClock
	log   vlog
	rng   *rand.Rand
	now   time.Time // everything up to now has been simulated

	timeline []segment
	segIdx   int
	segStart time.Time
	events   []timed
	held     bool // HoldTimeline: the current segment does not end

	cfg     engineConfig
	plan    kvPlan
	phase   phase
	eng     *engine
	upAt    time.Time
	traffic traffic
	arrival time.Time // next background arrival; zero = none
	stats   time.Time // next stats log line; zero = none
	broken  metricsMode
	pids    int

	reqSeq   uint64
	records  []*request    // recent external requests, for TokenTimes
	acceptCh chan struct{} // closed when accepting() changes
	wake     chan struct{}
	runOnce  sync.Once

	// frontHot: the segment saturates the front-end's thread (api-server-cpu,
	// real clock only); frontJobs are requests waiting for it.
	frontHot  atomic.Bool
	frontJobs chan frontJob
	frontWake chan struct{}
}

// timed is a lifecycle or timeline action at a simulated time.
type timed struct {
	at time.Time
	fn func()
}

// metricsMode is how /metrics answers in the metrics-broken scenario.
type metricsMode int

const (
	metricsOK metricsMode = iota
	metrics404
	metrics500
	metricsGarbage
)

// errEngineDead is what in-flight requests get when the engine core dies.
var errEngineDead = errors.New("EngineCore encountered an issue. See stack trace (above) for the root cause.")

// New builds a sim from cfg. Invalid flags are an error (vLLM's own argument
// errors); a configuration that cannot start (weights or KV do not fit) is
// not: the sim then logs vLLM's start-up failure and stays down, as the real
// server would under a restarting supervisor.
func New(cfg Config) (*Sim, error) {
	tl, err := parseTimeline(cfg.Scenario)
	if err != nil {
		return nil, err
	}
	// The flags are checked as vLLM would check them: with the scenario's
	// own flags (a deployment's other settings) beside them. Checked alone
	// against vLLM's defaults, --max-num-batched-tokens 768 was refused for
	// being under a --max-num-seqs 1024 the kv-pressure scenario sets to
	// 256.
	for _, seg := range tl {
		c, err := seg.config(cfg)
		if err == nil {
			_, err = c.resolve()
		}
		if err != nil {
			if _, alone := cfg.resolve(); alone != nil && alone.Error() == err.Error() {
				return nil, err // wrong whatever the scenario
			}
			return nil, fmt.Errorf("scenario %v conflicts with the flags given: %w", seg.names, err)
		}
	}
	if cfg.TrafficScale <= 0 {
		cfg.TrafficScale = 1
	}
	if cfg.MaxBackgroundWaiting <= 0 {
		cfg.MaxBackgroundWaiting = 4000
	}
	s := &Sim{user: cfg, clock: cfg.Clock, timeline: tl, acceptCh: make(chan struct{}), wake: make(chan struct{}, 1),
		frontJobs: make(chan frontJob), frontWake: make(chan struct{}, 1)}
	if s.clock == nil {
		s.clock = realClock{}
	}
	s.fake, _ = s.clock.(*FakeClock)
	s.rng = rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed))
	s.log.w = cfg.Log
	s.now = s.clock.Now()
	s.mu.Lock()
	s.enterSegment(0, true)
	s.runUntil(s.now) // an instant start is done before New returns
	s.mu.Unlock()
	return s, nil
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func (s *Sim) at(d time.Duration, fn func()) {
	t := s.now.Add(d)
	i := len(s.events)
	for i > 0 && s.events[i-1].at.After(t) {
		i--
	}
	s.events = append(s.events, timed{})
	copy(s.events[i+1:], s.events[i:])
	s.events[i] = timed{t, fn}
}

// enterSegment starts timeline segment i: the engine restarts when the
// segment needs different flags, and its faults and end are scheduled.
func (s *Sim) enterSegment(i int, first bool) {
	s.segIdx, s.segStart, s.events = i, s.now, nil
	seg := s.timeline[i]
	c, _ := seg.config(s.user)
	ecfg, _ := c.resolve() // validated in New
	plan := ecfg.planKV()
	changed := first || fmt.Sprint(ecfg) != fmt.Sprint(s.cfg) || plan.fault != s.plan.fault
	s.cfg, s.plan = ecfg, plan
	s.traffic = seg.traffic(s.demand(seg, ecfg))
	s.broken = metricsOK
	switch {
	case first && (seg.has("restart") || seg.has("oom")):
		s.startEngine(0, ecfg.startup)
	case first:
		s.startEngine(0, 0)
	case changed || seg.has("restart") || s.phase != phaseUp:
		s.shutdown("")
		s.startEngine(2*time.Second, ecfg.startup)
	}
	if seg.has("crash") {
		s.at(time.Second, s.crash)
	}
	if seg.has("metrics") {
		s.cycleMetrics()
	}
	if hot := seg.has(frontCPU) && s.fake == nil; hot != s.frontHot.Load() {
		s.frontHot.Store(hot)
		select {
		case s.frontWake <- struct{}{}:
		default:
		}
	}
	if seg.dur > 0 {
		var end func()
		end = func() {
			switch {
			case s.held:
				s.at(time.Second, end) // looked at again each second
			case i+1 < len(s.timeline):
				s.enterSegment(i+1, false)
			case s.user.Loop:
				s.enterSegment(0, false)
			}
		}
		s.at(seg.dur, end)
	}
}

// demand is what the segment's background traffic is sized for: the
// scenario's own flags on the user's model and GPU. The flags a person
// tunes (--max-num-seqs, --gpu-memory-utilization…) change what the engine
// can serve, not what its clients ask: a flag change is measured against
// the same demand. (Sized from the flags given, raising --max-num-seqs
// would raise the arrivals with it and the queue would never drain.)
func (s *Sim) demand(seg segment, running engineConfig) (engineConfig, kvPlan) {
	u := s.user
	u.MaxNumSeqs, u.MaxNumBatchedTokens, u.MaxModelLen, u.BlockSize = 0, 0, 0, 0
	u.GPUMemoryUtil, u.KVCacheDtype, u.NumGPUBlocksOverride = 0, "", 0
	u.ChunkedPrefill, u.PrefixCaching = nil, nil
	c, err := seg.config(u)
	if err == nil {
		if d, err := c.resolve(); err == nil {
			return d, d.planKV()
		}
	}
	return running, running.planKV()
}

// HoldTimeline keeps the current scenario segment running past its end
// while hold is set; released, the timeline moves on within a second. The
// demo holds it while the monitor's benchmark runs, so a quick run measures
// one scenario instead of a restart between two.
func (s *Sim) HoldTimeline(hold bool) {
	s.mu.Lock()
	s.held = hold
	s.mu.Unlock()
}

func (s *Sim) cycleMetrics() {
	s.broken = metrics404
	s.at(15*time.Second, func() { s.broken = metrics500 })
	s.at(30*time.Second, func() { s.broken = metricsGarbage })
	s.at(45*time.Second, s.cycleMetrics)
}

// setPhase moves the process and tells Serve whether to listen.
func (s *Sim) setPhase(p phase) {
	was := s.accepting()
	s.phase = p
	if s.accepting() != was {
		close(s.acceptCh)
		s.acceptCh = make(chan struct{})
	}
}

func (s *Sim) accepting() bool { return s.phase == phaseUp || s.phase == phaseDead }

// startEngine begins a start that takes startup (0 = at once) after delay.
func (s *Sim) startEngine(delay, startup time.Duration) {
	s.setPhase(phaseLoading)
	s.pids++
	s.log.apiPid, s.log.corePid = 100+s.pids*2, 101+s.pids*2
	s.stats, s.arrival = time.Time{}, time.Time{}
	cfg, plan := s.cfg, s.plan
	for _, l := range s.log.startupLines(cfg, plan) {
		s.at(delay+time.Duration(l.at*float64(startup)), func() { s.log.line(s.now, l.proc, l.level, l.file, l.text) })
	}
	s.at(delay+startup, func() {
		if plan.fault != faultNone {
			for _, m := range faultLines(cfg, plan) {
				s.log.line(s.now, procCore, "ERROR", "core.py:708", m)
			}
			s.log.line(s.now, procAPI, "ERROR", "api_server.py:1921", "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}")
			s.setPhase(phaseDown)
			s.at(30*time.Second, func() { s.startEngine(0, max(startup, 10*time.Second)) })
			return
		}
		s.eng = newEngine(cfg, plan, s.now)
		s.upAt = s.now
		s.setPhase(phaseUp)
		s.log.line(s.now, procAPI, "INFO", "api_server.py:1680", fmt.Sprintf("Starting vLLM API server 0 on http://0.0.0.0:%d", cfg.port))
		s.log.uvicorn(fmt.Sprintf("Started server process [%d]", s.log.apiPid))
		s.log.uvicorn("Waiting for application startup.")
		s.log.uvicorn("Application startup complete.")
		if cfg.logStats {
			s.stats = s.now.Add(cfg.logInterval)
		}
		s.arrival = s.nextArrivalAfter(s.now)
	})
}

// shutdown stops a serving engine (a restart with new flags, or after a
// crash): in-flight requests fail, the port closes.
func (s *Sim) shutdown(reason string) {
	if s.eng != nil && s.phase == phaseUp {
		s.eng.failAll(errEngineDead, s.now)
	}
	if s.phase == phaseUp || s.phase == phaseDead {
		s.log.uvicorn("Shutting down")
		s.log.uvicorn("Waiting for application shutdown.")
		s.log.uvicorn("Application shutdown complete.")
		s.log.uvicorn(fmt.Sprintf("Finished server process [%d]", s.log.apiPid))
	}
	s.stats, s.arrival = time.Time{}, time.Time{}
	s.setPhase(phaseDown)
}

// crash kills the engine core: /health answers 503 for a few seconds, then
// the process exits (connection refused) and a supervisor restarts it.
func (s *Sim) crash() {
	const serveFirst = 15 * time.Second // let the monitor see it serving first
	if s.phase != phaseUp || s.now.Sub(s.upAt) < serveFirst {
		s.at(max(time.Second, serveFirst-s.now.Sub(s.upAt)), s.crash)
		return
	}
	for _, m := range []string{
		"EngineCore encountered a fatal error.",
		"Traceback (most recent call last):",
		"torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
		"CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
		"For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
		"Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
	} {
		s.log.line(s.now, procCore, "ERROR", "core.py:710", m)
	}
	s.log.line(s.now, procAPI, "ERROR", "async_llm.py:480", "AsyncLLM output_handler failed.")
	s.log.line(s.now, procAPI, "ERROR", "async_llm.py:480", "vllm.v1.engine.exceptions.EngineDeadError: "+errEngineDead.Error())
	s.eng.failAll(errEngineDead, s.now)
	s.stats, s.arrival = time.Time{}, time.Time{}
	s.setPhase(phaseDead)
	s.at(6*time.Second, func() {
		s.shutdown("")
		s.at(3*time.Second, func() { s.startEngine(0, s.cfg.startup) })
	})
	if s.timeline[s.segIdx].dur == 0 {
		s.at(90*time.Second, s.crash)
	}
}

// Scenario is the timeline segment now running: its scenario name(s)
// joined by "+", how long it has run and how long it lasts (0: forever).
func (s *Sim) Scenario() (name string, elapsed, length time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seg := s.timeline[s.segIdx]
	return strings.Join(seg.names, "+"), s.now.Sub(s.segStart), seg.dur
}
