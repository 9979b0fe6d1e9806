package sim

import (
	"context"
	"errors"
	"time"
)

// nextEvent is the earliest thing the sim has to do, and which.
func (s *Sim) nextEvent() (time.Time, func()) {
	var at time.Time
	var do func()
	consider := func(t time.Time, fn func()) {
		if !t.IsZero() && (do == nil || t.Before(at)) {
			at, do = t, fn
		}
	}
	if s.phase == phaseUp && s.eng.flight != nil {
		consider(s.eng.flight.end, s.finishStep)
	}
	if len(s.events) > 0 {
		consider(s.events[0].at, s.popEvent)
	}
	if s.phase == phaseUp {
		consider(s.arrival, s.arrive)
		consider(s.stats, s.logStats)
	}
	return at, do
}

func (s *Sim) popEvent() {
	ev := s.events[0]
	s.events = s.events[1:]
	ev.fn()
}

// runUntil simulates everything due up to t, in time order.
func (s *Sim) runUntil(t time.Time) {
	for {
		at, do := s.nextEvent()
		if do == nil || at.After(t) {
			break
		}
		if at.After(s.now) {
			s.now = at
		}
		do()
	}
	if t.After(s.now) {
		s.now = t
	}
}

func (s *Sim) finishStep() {
	st := s.eng.flight
	s.eng.flight = nil
	if s.fake == nil {
		// On the real clock the tokens leave when the runner actually woke:
		// record that, so the sim's books match what clients see.
		if n := s.clock.Now(); n.After(st.end) {
			st.end, s.now = n, n
		}
	}
	s.eng.commit(st)
	s.kick()
}

// kick plans the next step if the engine is idle and has work.
// The gauges are refreshed either way: a queued request shows at once.
func (s *Sim) kick() {
	if s.phase != phaseUp {
		return
	}
	if s.eng.flight == nil {
		s.eng.flight = s.eng.schedule(s.now)
	}
	s.eng.updateGauges()
}

func (s *Sim) arrive() {
	if s.eng.waitq.Len() < s.user.MaxBackgroundWaiting && s.user.Background {
		r := s.backgroundRequest()
		r.arrival = s.now
		if x := s.cfg.kvXfer; s.cfg.pd == PDDecode && x > 0 {
			// The prefill's KV arrives first: the request waits for it
			// (vLLM counts it where the transfer is performed, here).
			d := time.Duration((0.8 + 0.4*s.rng.Float64()) * float64(x))
			if m := s.eng.met.nixlXfer; m != nil {
				m.Observe(d.Seconds())
			}
			eng := s.eng
			s.at(d, func() {
				if s.eng == eng && s.phase == phaseUp {
					eng.enqueue(r)
					s.kick()
				}
			})
		} else {
			s.eng.enqueue(r)
			s.kick()
		}
	}
	s.arrival = s.nextArrivalAfter(s.now)
	if !s.user.Background {
		s.arrival = time.Time{}
	}
}

// logStats writes the periodic stats line; vLLM logs it at DEBUG (so not
// at all by default) when the engine is idle.
func (s *Sim) logStats() {
	e := s.eng
	el := s.now.Sub(e.ivStart).Seconds()
	idle := len(e.running) == 0 && e.waitq.Len() == 0 && e.ivPrompt == 0 && e.ivGen == 0
	if !idle && el > 0 {
		hit := 0.0
		if e.ivPrefixQueries > 0 {
			hit = float64(e.ivPrefixHits) / float64(e.ivPrefixQueries)
		}
		s.log.line(s.now, procAPI, "INFO", "loggers.py:259", statsLine(float64(e.ivPrompt)/el, float64(e.ivGen)/el,
			len(e.running), e.waitq.Len(), e.ivPreempt, e.kv.usage(), hit))
	}
	e.ivStart = s.now
	e.ivPrompt, e.ivGen, e.ivPreempt, e.ivPrefixQueries, e.ivPrefixHits = 0, 0, 0, 0, 0
	s.stats = s.now.Add(s.cfg.logInterval)
}

// Start runs the sim on the real clock until ctx is done. It returns at
// once; with a FakeClock it does nothing (drive the sim with Advance).
func (s *Sim) Start(ctx context.Context) {
	if s.fake != nil {
		return
	}
	s.runOnce.Do(func() {
		go s.run(ctx)
		go s.runFront(ctx)
	})
}

func (s *Sim) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		s.runUntil(s.clock.Now())
		next, do := s.nextEvent()
		s.mu.Unlock()
		d := time.Hour
		if do != nil {
			d = max(0, time.Until(next))
		}
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.wake:
		}
	}
}

func (s *Sim) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Advance moves a FakeClock by d and simulates everything due in it. It is
// an error on the real clock.
func (s *Sim) Advance(d time.Duration) error {
	if s.fake == nil {
		return errors.New("sim: Advance needs a FakeClock")
	}
	t := s.fake.add(d)
	s.mu.Lock()
	s.runUntil(t)
	s.mu.Unlock()
	return nil
}

// errNotServing is returned by submit while the engine is not up.
var errNotServing = errors.New("engine not serving")

// submit puts an external request in the queue at the current time.
func (s *Sim) submit(r *request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runUntil(s.clock.Now())
	switch s.phase {
	case phaseUp:
	case phaseDead:
		return errEngineDead
	default:
		return errNotServing
	}
	s.reqSeq++
	r.seq = s.reqSeq
	if r.arrival.IsZero() || r.arrival.After(s.now) {
		r.arrival = s.now
	}
	if r.target == 0 { // when the model would emit EOS
		r.target = max(1, int(logNormal(s.rng, 200, 0.6)))
	}
	s.eng.enqueue(r)
	s.kick()
	s.poke()
	return nil
}

// abort ends r as a client disconnect: counted "abort", KV freed.
func (s *Sim) abort(r *request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runUntil(s.clock.Now())
	if r.done || s.eng == nil {
		return
	}
	s.eng.finish(r, "abort", s.now)
	s.eng.updateGauges()
	s.poke()
}

// Accepting reports whether the server should be listening, and a channel
// closed when that changes.
func (s *Sim) Accepting() (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runUntil(s.clock.Now())
	return s.accepting(), s.acceptCh
}
