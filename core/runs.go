package core

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// maxRuns bounds the ledger per endpoint (a crash loop for a day must not
// grow it without end).
const maxRuns = 64

// newRun starts run N+1 at t. external says the store did not see the
// boundary itself (a log banner, a new identity): its windows are told to
// restart with the next sample.
func (m *Monitor) newRun(e *Endpoint, t time.Time, by string, external bool) {
	if prev := e.Current(); prev != nil {
		if prev.Ended == nil {
			m.endRun(e, m.endTime(e, t), model.RunUnknown, "", "")
		}
		m.closeRunFindings(e, *prev, t)
	}
	m.clearAcks(e.URL) // acknowledged for the run it was seen in only
	n := 1
	if prev := e.Current(); prev != nil {
		n = prev.N + 1
	}
	e.Runs = append(e.Runs, model.Run{N: n, Started: t, End: model.RunRunning, StartedBy: by,
		Engine: e.Identity.Engine, Version: e.Identity.Version, Models: modelIDs(e.Identity)})
	if len(e.Runs) > maxRuns {
		e.Runs = append([]model.Run(nil), e.Runs[len(e.Runs)-maxRuns:]...)
	}
	if n == 1 {
		m.applyPastConfig(e)
	}
	if l := e.launch; l != nil && !t.Before(l.Time.Add(-launchSlack)) {
		cur := e.Current()
		cur.Applied = l.Applied
		setConfig(cur, "launch.cmdline", l.Cmdline)
		e.launch = nil
	}
	e.sampled, e.peaks, e.runSamples = false, peaks{}, 0
	if external {
		m.store.StartRun(e.URL, t)
	}
	m.runMoved = true
	m.ver.Store++
}

// endTime is when a run that ended without a word ended: when its endpoint
// stopped answering, else its last scrape with metrics before t.
func (m *Monitor) endTime(e *Endpoint, t time.Time) time.Time {
	if !e.downSince.IsZero() && e.downSince.Before(t) {
		return e.downSince
	}
	if !e.lastLive.IsZero() && e.lastLive.Before(t) {
		return e.lastLive
	}
	return t
}

// endRun records how the current run ended; the first word on it stands
// (a crash followed by the supervisor's clean shutdown stays a crash).
func (m *Monitor) endRun(e *Endpoint, t time.Time, how model.RunEnd, reason, line string) {
	r := e.Current()
	if r == nil {
		return
	}
	if r.Ended != nil && r.End != model.RunUnknown && !(r.EndGuessed && (how == model.RunPlanned || how == model.RunCrash)) {
		return // the first word stands, but a guess gives way to the log's (or the kernel's) word
	}
	r.EndGuessed = false
	if r.Ended == nil {
		end := t
		r.Ended = &end
	}
	r.End, r.EndReason, r.EndLine = how, reason, line
	// The run's findings end with it (but the crash that ended it): a
	// backlog read before a planned stop must not sit on top of a stopped
	// or starting engine.
	m.closeRunFindings(e, *r, *r.Ended)
	m.runMoved = true
	m.ver.Store++
}

// restarted takes the store's word that a new run began (counters went
// back or the process start time changed).
func (m *Monitor) restarted(url string, ev model.Event) {
	e := m.eps[url]
	if e == nil {
		return
	}
	if r := e.Current(); r != nil && !e.sampled {
		// The log's banner (or the endpoint's return) already started
		// this run: the store confirms it.
		r.StartedBy += "; " + strings.TrimPrefix(ev.Title, "engine restarted: ")
		return
	}
	m.newRun(e, ev.Time, strings.TrimPrefix(ev.Title, "engine restarted: "), false)
	e.sampled = true
}

// closeRunFindings closes the ended run's findings at the boundary, but
// the crash that ended it: that one explains the restart.
func (m *Monitor) closeRunFindings(e *Endpoint, ended model.Run, at time.Time) {
	keep := map[string]bool{}
	if ended.End == model.RunCrash {
		// The outage outlives the run it ended: closing its finding here
		// made it form again from zero while nothing answered.
		keep[endpointDown] = e.Down()
		for _, x := range m.crashEvents(e, ended) {
			if id := diagnosis.FindingForEvent(x.Kind); id != "" {
				keep[id] = true
			}
		}
	}
	m.dg.EndRun(e.URL, at, func(f diagnosis.Finding) bool { return keep[f.ID] })
}

// crashEvents are the log's critical lines around a crashed run's end:
// the evidence that outlives the run.
func (m *Monitor) crashEvents(e *Endpoint, r model.Run) []model.Event {
	if r.End != model.RunCrash || r.Ended == nil {
		return nil
	}
	var out []model.Event
	for i := 0; i < m.events.Len(); i++ {
		x := m.events.Newest(i).Event
		if x.Time.Before(r.Ended.Add(-crashSpan)) {
			break
		}
		if x.Source == "log" && x.Severity == model.SevCrit && !x.Time.After(r.Ended.Add(crashSpan)) {
			if ep := m.logEndpoint(x); ep == e {
				out = append(out, x)
			}
		}
	}
	return out
}

// crashSpan is how far around a crash's first line its other lines are
// (the root cause, then the engine's death, then the supervisor).
const crashSpan = 30 * time.Second

// Only an engine whose log says so when it shuts down cleanly (uvicorn's
// "Shutting down" for vLLM, SGLang and trtllm-serve; llama-server's
// "cleaning up before exit...": engines.LogsShutdown) has a silent log
// that means killed. Ollama logs nothing at INFO on SIGTERM, so its end
// stays unknown.

// heldPort reports whether a failed scrape's kind shows a process still
// holding the port: the connection was accepted, the answer never came.
func heldPort(k model.ScrapeErrKind) bool {
	return k == model.ErrTimeout || k == model.ErrStalled
}

// endpointDown is the rule whose finding is the outage itself.
const endpointDown = "endpoint_down"

// killedAfter is how long an endpoint must be down, with its log attached
// and silent about a shutdown, before its run counts as killed.
// (An engine draining in-flight requests on SIGTERM closes its port first
// and logs its shutdown line when they are done: llama-server waits for
// open connections. A later shutdown line still turns the guess planned.)
const killedAfter = 15 * time.Second

// updateRuns settles how down runs ended and refreshes the current runs'
// summaries.
func (m *Monitor) updateRuns(now time.Time) {
	for _, url := range m.order {
		e := m.eps[url]
		r := e.Current()
		if r == nil {
			continue
		}
		// Killed: it served in this run, stopped answering, and its log
		// (attached) said nothing of a shutdown or a crash. A run still
		// starting has not served yet.
		// A scrape that timed out or stalled was accepted: a process still
		// holds the port (hung, SIGSTOPped, overloaded), which no kill leaves.
		if r.Ended == nil && e.sampled && e.downSince.After(r.Started) && e.Life != model.LifeStarting && !heldPort(e.ErrKind) &&
			now.Sub(e.downSince) >= killedAfter && m.logFor(e) && engines.LogsShutdown(r.Engine) {
			m.endRun(e, e.downSince, model.RunCrash, "stopped answering with no shutdown line in its log: killed (SIGKILL, the OOM killer) or crashed", "")
			r.EndGuessed = true
			m.setLife(e, model.LifeCrashed, e.downSince, "stopped answering; the log has no shutdown line (killed?)")
		}
		// A restart that changed the configuration was planned, though
		// nothing said so at the time.
		if n := len(e.Runs); n >= 2 {
			prev := &e.Runs[n-2]
			if prev.End == model.RunUnknown {
				if d := model.ConfigDiff(prev.Config, r.Config); len(d) > 0 {
					// guessed: no line said it stopped cleanly (a kill -9
					// and a start with new flags reads the same)
					prev.End, prev.EndReason = model.RunPlanned, "configuration changed: "+strings.Join(d, ", ")
					prev.EndGuessed = true
				}
			}
		}
		if r.Ended == nil {
			m.summarize(e, now)
		}
	}
}

// logFor reports whether e's engine log is attached (a log is attached and
// its events belong to e).
func (m *Monitor) logFor(e *Endpoint) bool {
	return m.LogsOn() && len(m.order) == 1 && m.order[0] == e.URL
}

// summarize refreshes the current run's summary from the store.
func (m *Monitor) summarize(e *Endpoint, now time.Time) {
	r := e.Current()
	if r == nil || r.Ended != nil || !e.sampled {
		return
	}
	// Nothing it is read from changed since it was last worked out: it
	// stands (the scrape's own call before its samples, and every
	// replica of a fleet that did not change).
	in := summaryInputs{store: m.store.Changes(e.URL), run: r.N, samples: e.runSamples, peaks: e.peaks}
	if e.summarized == in {
		return
	}
	e.summarized = in
	k, ok := m.primaryKey(e.URL)
	if !ok {
		return
	}
	st := m.store.State(k, m.opts.Store.MaxWindow)
	if st.Samples == 0 {
		return
	}
	sum := model.RunSummary{Samples: e.runSamples, RequestsPS: st.RequestsPS, GenTPS: st.GenTPS, PromptTPS: st.PromptTPS,
		Preemptions: st.Preemptions, KVPeak: e.peaks.kv, WaitingPeak: e.peaks.waiting, RunningPeak: e.peaks.running,
		WindowS: st.RateWindow.Seconds(), SpecAccept: st.SpecAccept}
	if !st.RunStart.IsZero() {
		sum.ServedS = st.Time.Sub(st.RunStart).Seconds()
	}
	sum.OfferedPS = m.offered(k, st)
	ms := func(o model.Opt) model.Opt {
		if !o.OK {
			return o
		}
		return model.Some(o.V * 1000)
	}
	q := func(l model.Latency) (p50, p99 model.Opt) {
		d := st.Latency[l]
		p50, p99 = ms(d.P50), ms(d.P99)
		if !p50.OK && d.Mean.OK { // a mean-only latency (llama.cpp's TPOT)
			p50 = ms(d.Mean)
		}
		return
	}
	sum.TTFTp50ms, sum.TTFTp99ms = q(model.TTFT)
	sum.TPOTp50ms, sum.TPOTp99ms = q(model.TPOT)
	sum.ITLp50ms, sum.ITLp99ms = q(model.ITL)
	r.Summary = sum
}

// offered is the load offered over the rate window: finished requests/s
// plus the growth of the requests in the engine (running + waiting) from
// the window's start to its end. Unknown without both gauges.
func (m *Monitor) offered(k model.Key, st model.State) model.Opt {
	if !st.RequestsPS.OK || st.RateWindow <= 0 {
		return model.None
	}
	from := st.Time.Add(-st.RateWindow)
	if since := m.store.SteadySince(k); !m.opts.FromScratch && !since.IsZero() && !from.Before(since) &&
		st.Running.OK && st.Waiting.OK && !math.IsInf(st.Running.V+st.Waiting.V, 0) && !math.IsNaN(st.Running.V+st.Waiting.V) {
		// Every point in the window holds the newest numbers (a steady
		// replica): the requests in the engine did not grow, and the
		// rings need not be searched.
		grew := (st.Running.V + st.Waiting.V) - (st.Running.V + st.Waiting.V)
		return model.Some(max(0, st.RequestsPS.V+grew/st.RateWindow.Seconds()))
	}
	in := func(name string) (first, last model.Opt) {
		return m.store.RunSeriesEnds(k, name, from, st.Time)
	}
	r0, r1 := in(string(model.Running))
	w0, w1 := in(string(model.Waiting))
	if !r0.OK || !w0.OK {
		return model.None
	}
	grew := (r1.V + w1.V) - (r0.V + w0.V)
	return model.Some(max(0, st.RequestsPS.V+grew/st.RateWindow.Seconds()))
}

// primaryKey is the endpoint's key with the most samples (its main model).
func (m *Monitor) primaryKey(url string) (model.Key, bool) {
	var best model.Key
	n := -1
	m.keys = m.store.AppendKeysOf(m.keys[:0], url)
	for _, k := range m.keys {
		if c := m.store.Samples(k); c > n {
			best, n = k, c
		}
	}
	return best, n > 0
}

// attachBench files a benchmark under the run it measured.
func (e *Endpoint) attachBench(b model.RunBench) {
	for i := len(e.Runs) - 1; i >= 0; i-- {
		r := &e.Runs[i]
		if !b.Time.Before(r.Started) && (r.Ended == nil || !b.Time.After(*r.Ended)) {
			r.Benches = append(r.Benches, b)
			return
		}
	}
}

func setConfig(r *model.Run, k, v string) {
	if r.Config == nil {
		r.Config = map[string]string{}
	}
	r.Config[k] = v
}

// parseArgs reads an engine's configuration line into key → value: vLLM's
// Python dict "{'model': 'x', 'max_num_seqs': 32}" (quotes dropped), a V0
// vLLM's argparse Namespace "gpu_memory_utilization=0.9, model='x'" (every
// flag; None, an unset one, is left out) or Ollama's Go map
// "map[OLLAMA_NUM_PARALLEL:4 OLLAMA_HOST:http://…]". Values holding
// separators inside brackets or quotes stay whole.
func parseArgs(s string) map[string]string {
	s = strings.TrimSpace(s)
	sep, kv := byte(','), ":"
	switch {
	case strings.HasPrefix(s, "map["):
		s, sep = strings.TrimSuffix(strings.TrimPrefix(s, "map["), "]"), ' '
	case strings.HasPrefix(s, "{"):
		s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	default:
		kv = "="
	}
	out := map[string]string{}
	for _, part := range splitTop(s, sep) {
		k, v, ok := strings.Cut(part, kv)
		if kv == "=" && strings.TrimSpace(v) == "None" {
			continue
		}
		if !ok {
			continue
		}
		k = strings.Trim(strings.TrimSpace(k), `'"`)
		v = strings.Trim(strings.TrimSpace(v), `'"`)
		if k != "" {
			out[k] = v
		}
	}
	return out
}

// splitTop splits on sep outside quotes and brackets.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '[' || c == '{' || c == '(':
			depth++
		case c == ']' || c == '}' || c == ')':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// applyLaunch takes llmtop's own (re)start of the engine: the run that was
// serving ended as planned (llmtop stopped it), and the run it starts is
// marked with the change it applied and carries its exact command line.
// The word can come before or after that run is seen: a run that started
// at most launchSlack before the word's time is the new one (log lines
// carry whole seconds).
func (m *Monitor) applyLaunch(l model.Launch) {
	e := m.eps[l.Endpoint]
	if e == nil {
		if l.Applied != "" || l.Restarting || l.Failed != "" {
			return
		}
		// llmtop run's first start, before any scrape: the endpoint is
		// the one it launched, starting.
		e = m.endpoint(l.Endpoint)
	}
	m.ver.Store++
	switch {
	case l.Restarting:
		// llmtop stops the engine to restart it: its run ends planned
		// now, and until the new process is told, nothing answering is
		// the restart (its drain, its new start), not an outage.
		p := l
		e.restarting = &p
		if r := e.Current(); r != nil && r.Ended == nil {
			m.endRun(e, l.Time, model.RunPlanned, restartedBy+l.Applied, "")
		}
		m.setLife(e, model.LifeStarting, l.Time, l.RestartDetail())
		return
	case l.Failed != "":
		was := nonEmpty(l.Applied, "its restart")
		if e.restarting != nil {
			was = e.restarting.Applied
		}
		e.restarting = nil
		m.setLife(e, model.LifeStopped, l.Time, "llmtop stopped it to restart it, and could not start it again: "+l.Failed)
		m.addEvent(model.Event{Time: l.Time, Endpoint: l.Endpoint, Source: "llmtop run", Kind: "restart_failed", Severity: model.SevCrit,
			Category: "availability", Title: "llmtop stopped the engine to restart it (" + was + ") and could not start it again: " + l.Failed})
		return
	}
	e.restarting = nil
	if e.LastOK.IsZero() || e.Down() {
		// Nothing answers yet: the process llmtop just started is
		// starting, so a refused scrape is its not listening yet, not an
		// outage.
		detail := fmt.Sprintf("launched by llmtop (pid %d)", l.PID)
		if l.Applied != "" {
			detail = fmt.Sprintf("%s: pid %d started", l.RestartDetail(), l.PID)
		}
		m.setLife(e, model.LifeStarting, l.Time, detail)
	}
	marked := false
	for i := len(e.Runs) - 1; i >= 0; i-- {
		r := &e.Runs[i]
		if !r.Started.Before(l.Time.Add(-launchSlack)) {
			if r.Applied == "" && !marked {
				r.Applied = l.Applied
				setConfig(r, "launch.cmdline", l.Cmdline)
			}
			marked = true
			continue
		}
		if l.Applied == "" {
			break
		}
		// The run llmtop stopped.
		if r.Ended == nil {
			if i == len(e.Runs)-1 {
				m.endRun(e, l.Time, model.RunPlanned, restartedBy+l.Applied, "")
			}
		} else if r.End != model.RunCrash || r.EndGuessed {
			r.End, r.EndGuessed, r.EndReason = model.RunPlanned, false, restartedBy+l.Applied
		}
		break
	}
	if !marked {
		p := l
		e.launch = &p
	}
}

// restartedBy leads the end reason of a run llmtop stopped to restart it.
const restartedBy = "llmtop restarted it: "

// launchSlack is how much earlier than llmtop's word of a restart the new
// run may seem to start.
const launchSlack = 5 * time.Second

// RunsOf returns url's run ledger, oldest first (a copy).
func (m *Monitor) RunsOf(url string) []model.Run {
	e := m.eps[url]
	if e == nil {
		return nil
	}
	out := append([]model.Run(nil), e.Runs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out
}
