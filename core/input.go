package core

import (
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// ModelKeys are the endpoint+model pairs to show and judge. Log-derived
// samples that carry no model name are the same endpoint's picture from its
// log: they are not a separate choice when the endpoint is scraped too.
func (m *Monitor) ModelKeys() []model.Key {
	all := m.store.Keys()
	unscraped := false
	for _, k := range all {
		if !m.store.HasSource(k, model.FromScrape) || k.Endpoint == "" {
			unscraped = true
			break
		}
	}
	if !unscraped {
		return all // every key scraped (a fleet): none to leave out
	}
	scraped := map[string]bool{}
	for _, k := range all {
		if m.store.HasSource(k, model.FromScrape) {
			scraped[k.Endpoint] = true
		}
	}
	out := all[:0]
	for _, k := range all {
		if !m.store.HasSource(k, model.FromScrape) && scraped[k.Endpoint] {
			continue
		}
		if k.Endpoint == "" {
			// a log's samples that no endpoint owns (one --log, several
			// URLs): no endpoint to show, choose or judge
			continue
		}
		out = append(out, k)
	}
	return out
}

// input gathers what the Monitor holds into the rules' input: each
// endpoint's state over the window (its current run only), its lifecycle
// and ledger, and the events of its current run (plus the crash lines that
// ended the one before).
func (m *Monitor) input(now time.Time) diagnosis.Input {
	in := diagnosis.Input{Time: now, GPU: m.gpu, LogsOn: m.LogsOn(), Bench: m.bench, OwnLength: m.ownLength}
	if in.GPU != nil && len(in.GPU.GPUs) == 0 {
		in.NoGPU = nonEmpty(in.GPU.Err, "NVML lists no GPU")
		in.GPU = nil
	}
	// reused: a fleet's set was 2 000 entries grown anew every refresh
	if m.inSeen == nil {
		m.inSeen = map[string]bool{}
	}
	seen := m.inSeen
	clear(seen)
	keys := m.ModelKeys()
	m.evalKeys = keys // the same for the preemption check after the rules
	// The same slice every refresh: an endpoint is 2 KiB, and a fleet's
	// fresh slice was megabytes of garbage per refresh (the Diagnoser
	// copies what it keeps).
	in.Endpoints = m.inEps[:0]
	for _, k := range keys {
		e := m.eps[k.Endpoint]
		if e == nil || e.Life == model.LifeGone {
			continue // a gone endpoint is judged by no rule
		}
		buf := m.series[k]
		if buf == nil {
			buf = &diagnosis.SeriesBuf{}
			m.series[k] = buf
		}
		// built in place, in the slice's memory: an Endpoint is 2.5 KB
		in.Endpoints = append(in.Endpoints, diagnosis.Endpoint{})
		ep := &in.Endpoints[len(in.Endpoints)-1]
		diagnosis.FillFromStore(ep, m.store, k, e.Identity, e.Scrape(), e.LastOK, m.opts.Window, buf)
		if r := e.Current(); r != nil && (r.Ended != nil || ep.State.Time.Before(r.Started)) {
			// The store's newest numbers belong to a run that ended (the
			// engine stopped, or a new one is starting and has not been
			// read yet): the rules do not judge them as now.
			in.Endpoints = in.Endpoints[:len(in.Endpoints)-1]
			continue
		}
		seen[k.Endpoint] = true
		m.withLife(ep, e)
		m.hostInput(ep, e, now)
		// what the rules read of it, but the clock: a steady replica's
		// stands, and the Diagnoser keeps its verdicts
		ep.Mark = diagnosis.MarkOf(ep, m.store.StateMark(k), 0)
	}
	for _, u := range m.order {
		if e := m.eps[u]; e != nil && !seen[u] && e.Scrapes > 0 && e.Life != model.LifeGone {
			ep := diagnosis.Endpoint{URL: u, Identity: e.Identity, Scrape: e.Scrape(), LastOK: e.LastOK}
			m.withLife(&ep, e)
			m.hostInput(&ep, e, now)
			ep.Mark = diagnosis.MarkOf(&ep, m.store.Changes(u), 0)
			in.Endpoints = append(in.Endpoints, ep)
		}
	}
	in.Events = m.runEvents(now)
	m.inEps = in.Endpoints
	clear(seen) // nothing held past the input
	return in
}

func (m *Monitor) withLife(ep *diagnosis.Endpoint, e *Endpoint) {
	ep.Life, ep.LifeSince, ep.LifeDetail, ep.Port = e.Life, e.LifeSince, e.LifeDetail, e.Port
	ep.Runs = e.Runs
	if ep.Identity.Engine == model.Unknown {
		ep.Identity.Engine = e.engine()
	}
}

// runEvents are the events within the diagnosis' event window that belong
// to their endpoint's current run: from the end of the run before it (its
// start-up lines come before the first scrape that sees it), plus the
// crash lines that ended that run.
func (m *Monitor) runEvents(now time.Time) []model.Event {
	win := m.opts.Diagnosis.EventWindow
	var out []model.Event
	for i := 0; i < m.events.Len(); i++ {
		x := m.events.Newest(i).Event
		if now.Sub(x.Time) > win {
			break
		}
		if m.inCurrentRun(x) {
			out = append(out, x)
		}
	}
	// oldest first, as the log had them
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func (m *Monitor) inCurrentRun(x model.Event) bool {
	e := m.logEndpoint(x)
	if e == nil || len(e.Runs) < 2 {
		return true
	}
	prev := e.Runs[len(e.Runs)-2]
	from := e.Runs[len(e.Runs)-1].Started
	if prev.Ended != nil && prev.Ended.Before(from) {
		from = *prev.Ended
	}
	if !x.Time.Before(from) {
		return true
	}
	// The crash that ended the previous run stays as its explanation.
	return prev.End == model.RunCrash && prev.Ended != nil && x.Source == "log" && x.Severity == model.SevCrit &&
		!x.Time.Before(prev.Ended.Add(-crashSpan)) && !x.Time.After(prev.Ended.Add(crashSpan))
}
