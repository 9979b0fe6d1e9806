package sim

import (
	"container/list"
	"sort"
	"strings"
	"time"
)

// engine is one incarnation of the simulated vLLM engine: a restart builds
// a new one, so every counter starts again from zero. All methods run under
// the Sim's lock.
type engine struct {
	cfg     engineConfig
	phys    physics
	plan    kvPlan
	kv      *kvPool
	met     *metrics
	waitq   *list.List // of *request; FIFO, preempted requests go back to the front
	running []*request
	flight  *step     // the step executing now, nil when idle
	now     time.Time // the latest schedule or commit (the LoRA info gauge's value)

	// since the last stats log line
	ivStart                       time.Time
	ivPrompt, ivGen, ivPreempt    int
	ivPrefixQueries, ivPrefixHits int
	recent                        [256]span // recent steps, for GPU utilisation
	recentN                       int

	tally tally // the sim's own books, kept apart from the Prometheus registry
}

// tally counts what the engine did, independently of the metrics, so tests
// can check that what /metrics says matches what happened.
type tally struct {
	prompt, cached, gen, preempt, prefixQ, prefixH, firstTokens, gaps int
	finished                                                          map[string]int
}

type span struct{ start, end time.Time }

// step is one scheduled engine iteration.
type step struct {
	start, end time.Time
	items      []schedItem
}

type schedItem struct {
	r *request
	n int // tokens scheduled for r in this step
}

func newEngine(cfg engineConfig, plan kvPlan, now time.Time) *engine {
	return &engine{
		cfg:     cfg,
		phys:    newPhysics(cfg.model, cfg.gpu, cfg.fp8),
		plan:    plan,
		kv:      newKVPool(plan.numBlocks, cfg.prefixCaching),
		met:     newMetrics(cfg, plan, now),
		waitq:   list.New(),
		ivStart: now,
		tally:   tally{finished: map[string]int{}},
	}
}

func (e *engine) enqueue(r *request) {
	r.queued = e.waitq.PushBack(r)
}

func cdiv(a, b int) int { return (a + b - 1) / b }

// blockHash returns the hash for block j of r if it is a full prompt block.
func (e *engine) blockHash(r *request, j int) uint64 {
	if j < len(r.hashes) && (j+1)*e.cfg.blockSize <= r.prompt {
		return r.hashes[j]
	}
	return 0
}

// grow gives r the blocks it needs to hold upto tokens.
func (e *engine) grow(r *request, upto int) {
	for j := len(r.blocks); j < cdiv(upto, e.cfg.blockSize); j++ {
		h := e.blockHash(r, j)
		e.kv.acquire(h)
		r.blocks = append(r.blocks, h)
	}
}

func (e *engine) freeBlocks(r *request) {
	for _, h := range r.blocks {
		e.kv.release(h)
	}
	r.blocks = r.blocks[:0]
}

func (e *engine) removeRunning(r *request) {
	for i, x := range e.running {
		if x == r {
			copy(e.running[i:], e.running[i+1:])
			e.running[len(e.running)-1] = nil
			e.running = e.running[:len(e.running)-1]
			break
		}
	}
	r.running = false
}

// preempt frees r's KV and puts it back at the head of the queue: V1
// preemption is recompute, the prefill runs again from token zero.
func (e *engine) preempt(r *request) {
	e.removeRunning(r)
	e.freeBlocks(r)
	r.computed = 0
	r.queued = e.waitq.PushFront(r)
	e.ivPreempt++
	e.tally.preempt++
	e.met.preemptions.Inc()
}

// schedule builds the next step at now, as vLLM V1's scheduler: running
// requests first (decodes and continuing prefill chunks), preempting the
// newest running request when a block is needed and none is free; then,
// if nothing was preempted, admit waiting requests in FIFO order while the
// batch has room, the token budget lasts and the blocks suffice.
func (e *engine) schedule(now time.Time) *step {
	st := &step{start: now}
	budget := e.cfg.maxBatched
	preempted := false
	for i := 0; i < len(e.running) && budget > 0; i++ {
		r := e.running[i]
		n := min(r.total()-r.computed, budget)
		if n <= 0 {
			continue
		}
		for cdiv(r.computed+n, e.cfg.blockSize)-len(r.blocks) > e.kv.free() {
			victim := e.running[len(e.running)-1]
			e.preempt(victim)
			preempted = true
			if victim == r {
				break
			}
		}
		if !r.running {
			break
		}
		e.grow(r, r.computed+n)
		st.items = append(st.items, schedItem{r, n})
		budget -= n
	}
	e.now = now
	for el := e.waitq.Front(); !preempted && el != nil && len(e.running) < e.cfg.maxNumSeqs && budget > 0; {
		r := el.Value.(*request)
		if !e.loraFits(r) {
			el = el.Next() // deferred: its adapter cannot join the batch now
			continue
		}
		el = el.Next()
		matched := 0
		if e.cfg.prefixCaching {
			for _, h := range r.hashes {
				if !e.kv.cached(h) {
					break
				}
				matched++
			}
			if matched*e.cfg.blockSize >= r.total() { // always recompute the last token
				matched = (r.total() - 1) / e.cfg.blockSize
			}
		}
		hit := matched * e.cfg.blockSize
		n := r.total() - hit
		if !e.cfg.chunked && n > budget {
			break
		}
		n = min(n, budget)
		cost := cdiv(hit+n, e.cfg.blockSize) - matched
		for _, h := range r.hashes[:matched] {
			if e.kv.ref[h] == 0 {
				cost++ // an idle cached block leaves the free list
			}
		}
		if cost > e.kv.free() {
			break
		}
		e.waitq.Remove(r.queued)
		r.queued = nil
		for _, h := range r.hashes[:matched] {
			e.kv.acquire(h)
			r.blocks = append(r.blocks, h)
		}
		r.computed = hit
		e.grow(r, hit+n)
		if e.cfg.prefixCaching {
			e.met.prefixQueries.Add(float64(r.total()))
			e.met.prefixHits.Add(float64(hit))
			e.ivPrefixQueries += r.total()
			e.ivPrefixHits += hit
			e.tally.prefixQ += r.total()
			e.tally.prefixH += hit
		}
		if r.scheduled.IsZero() {
			r.scheduled = now
			r.cached = hit
		}
		r.running = true
		e.running = append(e.running, r)
		st.items = append(st.items, schedItem{r, n})
		budget -= n
	}
	if len(st.items) == 0 {
		return nil
	}
	prefill, decode, resident, tokens := 0, 0, 0, 0
	for _, it := range st.items {
		if it.n == 1 && it.r.generated > 0 {
			decode++
		} else if e.cfg.pd == PDDecode {
			decode++ // its prompt's KV came over the connector: loaded, not computed
		} else {
			prefill += it.n
		}
		resident += it.r.computed + it.n
		tokens += it.n
	}
	st.end = now.Add(e.phys.stepTime(prefill, decode, resident))
	e.met.iterationTokens.Observe(float64(tokens))
	return st
}

// commit applies a finished step at its end time: KV is computed, and every
// request whose whole context is now computed emits a token.
func (e *engine) commit(st *step) {
	e.now = st.end
	at := st.end
	e.recent[e.recentN%len(e.recent)] = span{st.start, st.end}
	e.recentN++
	for _, it := range st.items {
		r := it.r
		if r.done || !r.running {
			continue
		}
		r.computed += it.n
		if r.computed < r.total() {
			continue
		}
		e.emit(r, at)
	}
	e.updateGauges()
}

func (e *engine) emit(r *request, at time.Time) {
	r.generated++
	e.ivGen++
	e.tally.gen++
	e.met.genTokens.Inc()
	if r.generated == 1 {
		e.tally.firstTokens++
		e.tally.prompt += r.prompt
		e.tally.cached += r.cached
		r.firstTok = at
		e.met.ttft.Observe(at.Sub(r.arrival).Seconds())
		computed := r.prompt - r.cached
		e.ivPrompt += computed
		e.met.promptTokens.Add(float64(r.prompt))
		src := "local_compute"
		if e.cfg.pd == PDDecode {
			src = "external_kv_transfer"
		}
		e.met.promptBySource.WithLabelValues(src).Add(float64(computed))
		e.met.promptBySource.WithLabelValues("local_cache_hit").Add(float64(r.cached))
		e.met.promptCached.Add(float64(r.cached))
	} else {
		e.tally.gaps++
		e.met.itl.Observe(at.Sub(r.lastTok).Seconds())
	}
	r.lastTok = at
	if r.out != nil {
		r.out.times = append(r.out.times, at)
		r.out.wake()
	}
	switch {
	case r.generated >= r.maxTokens:
		e.finish(r, "length", at)
	case r.generated >= r.target && r.generated >= r.minTokens:
		e.finish(r, "stop", at)
	case r.total() >= e.cfg.maxModelLen:
		e.finish(r, "length", at)
	}
}

// finish ends r for reason at time t, frees its KV and records its stats.
func (e *engine) finish(r *request, reason string, t time.Time) {
	if r.done {
		return
	}
	r.done, r.finish = true, reason
	if r.running {
		e.removeRunning(r)
	}
	if r.queued != nil {
		e.waitq.Remove(r.queued)
		r.queued = nil
	}
	e.freeBlocks(r)
	e.tally.finished[reason]++
	e.met.observeFinished(r, t)
	if r.out != nil {
		r.out.done, r.out.finish = true, reason
		r.out.wake()
	}
}

// failAll ends every request with an engine error (EngineDeadError).
func (e *engine) failAll(err error, t time.Time) {
	all := append([]*request(nil), e.running...)
	for el := e.waitq.Front(); el != nil; el = el.Next() {
		all = append(all, el.Value.(*request))
	}
	for _, r := range all {
		if r.out != nil {
			r.out.err = err
		}
		e.finish(r, "error", t)
	}
	e.flight = nil
	e.updateGauges()
}

func (e *engine) updateGauges() {
	e.met.running.Set(float64(len(e.running)))
	e.met.waiting.Set(float64(e.waitq.Len()))
	deferred := 0
	var waitingLoRAs []string
	if e.cfg.loras > 0 {
		seen := map[string]bool{}
		for el := e.waitq.Front(); el != nil; el = el.Next() {
			r := el.Value.(*request)
			if !e.loraFits(r) {
				deferred++
			}
			if r.lora != "" && !seen[r.lora] {
				seen[r.lora] = true
				waitingLoRAs = append(waitingLoRAs, r.lora)
			}
		}
	}
	e.met.waitingCapacity.Set(float64(e.waitq.Len() - deferred))
	e.met.waitingDeferred.Set(float64(deferred))
	e.met.kvUsage.Set(e.kv.usage())
	if e.met.loraInfo != nil && !e.now.IsZero() {
		sort.Strings(waitingLoRAs)
		e.met.loraInfo.WithLabelValues(itoa(uint64(e.cfg.maxLoras)), strings.Join(waitingLoRAs, ","), strings.Join(e.runningLoRAs(), ",")).
			Set(float64(e.now.UnixNano()) / 1e9)
	}
}

// runningLoRAs are the adapters the running batch holds, sorted.
func (e *engine) runningLoRAs() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range e.running {
		if r.lora != "" && !seen[r.lora] {
			seen[r.lora] = true
			out = append(out, r.lora)
		}
	}
	sort.Strings(out)
	return out
}

// loraFits reports whether r's adapter can join the running batch: it is
// already there, or the batch holds fewer than --max-loras adapters.
func (e *engine) loraFits(r *request) bool {
	if r.lora == "" {
		return true
	}
	run := e.runningLoRAs()
	for _, l := range run {
		if l == r.lora {
			return true
		}
	}
	return len(run) < e.cfg.maxLoras
}

// busy is the share of [now-window, now] the engine spent in steps.
func (e *engine) busy(now time.Time, window time.Duration) float64 {
	from := now.Add(-window)
	var b time.Duration
	n := min(e.recentN, len(e.recent))
	for i := 0; i < n; i++ {
		s := e.recent[i]
		st, en := s.start, s.end
		if st.Before(from) {
			st = from
		}
		if en.After(now) {
			en = now
		}
		if en.After(st) {
			b += en.Sub(st)
		}
	}
	if e.flight != nil && e.flight.start.Before(now) {
		st := e.flight.start
		if st.Before(from) {
			st = from
		}
		b += now.Sub(st)
	}
	return min(1, b.Seconds()/window.Seconds())
}
