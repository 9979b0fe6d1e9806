package diagnosis

import (
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func init() {
	register(rule{id: "log_events", checks: "engine log free of OOM, startup and runtime failures", needs: needLogs, hold: holdNone, eval: ruleEvents})
}

// FindingForEvent is the id of the finding a log event kind opens ("" when
// it opens none): the catalogue's word (engines.LogLine.Finding).
func FindingForEvent(kind string) string {
	if r := eventRuleOf[kind]; r != nil {
		return r.id
	}
	return ""
}

// eventRuleOf is the event rule each log line kind opens (the catalogue's
// lines that name a finding).
var eventRuleOf = func() map[string]*eventRule {
	byID := make(map[string]*eventRule, len(eventRules))
	for i := range eventRules {
		byID[eventRules[i].id] = &eventRules[i]
	}
	out := map[string]*eventRule{}
	for _, l := range engines.LogLines() {
		if r := byID[l.Finding]; r != nil {
			out[l.ID] = r
		}
	}
	return out
}()

// isEventFinding reports whether id is one of the log-event findings.
func isEventFinding(id string) bool { return eventFindingIDs[id] }

// eventFindingIDs are the event rules' ids as a set: Rank asks for every
// pair of a fleet's findings it compares.
var eventFindingIDs = func() map[string]bool {
	ids := make(map[string]bool, len(eventRules))
	for _, r := range eventRules {
		ids[r.id] = true
	}
	return ids
}()

// EventKinds lists the log-event kinds (catalogue ids) that have a finding
// of their own, in the catalogue's order.
func EventKinds() []string {
	var out []string
	for _, l := range engines.LogLines() {
		if eventRuleOf[l.ID] != nil {
			out = append(out, l.ID)
		}
	}
	return out
}

func ruleEvents(e *env) []Finding {
	logEngine := engineFromEvents(e.in.Events)
	// One finding per fix and endpoint, from its newest event.
	type key struct{ id, ep string }
	newest := map[key]model.Event{}
	var order []key
	for _, x := range e.in.Events {
		r := eventRuleOf[x.Kind]
		if r == nil && x.Severity == model.SevCrit && x.Source == "log" {
			// Every critical line is a finding: without a fix of its own,
			// the generic one (its line, and where to look).
			r = &criticalEvent
		}
		if r == nil || e.past(x.Time, e.cfg.EventWindow) || e.ahead(x.Time) {
			continue
		}
		k := key{r.id, e.eventURL(x.Endpoint)}
		old, seen := newest[k]
		if !seen {
			order = append(order, k)
		}
		if !seen || !x.Time.Before(old.Time) {
			newest[k] = x
		}
	}
	var out []Finding
	for _, k := range order {
		x := newest[k]
		r := eventRuleOf[x.Kind]
		if r == nil {
			r = &criticalEvent
		}
		ep := endpointOf(e, x.Endpoint)
		if ep.Identity.Engine == model.Unknown {
			ep.Identity.Engine = logEngine[x.Endpoint]
		}
		sev := max(x.Severity, model.SevWarn)
		ev := eventEvidence(x)
		// The engine came back after the failure: still worth knowing,
		// no longer the emergency. The ledger remembers the recovery when
		// the engine is down again for another reason (a planned stop).
		back := servingSince(ep)
		after, ended := servedAfter(ep.Runs, x.Time)
		if ended {
			continue // the run that recovered from it has ended too: its story is over
		}
		if back.IsZero() || !back.After(x.Time) {
			back = after
		}
		if x.Backlog && servingNow(ep) {
			// From before llmtop watched, and the engine serves now: what
			// happened then is history, the line's time may not even be
			// known. It explains an engine that is down (kept as it is).
			sev = model.SevInfo
			ev = append(ev, Evidence{Text: "serving now; the line was in the log before llmtop started", Source: "scrape " + ep.URL})
		} else if !back.IsZero() && back.After(x.Time) {
			sev = model.SevWarn
			ev = append(ev, Evidence{Text: "serving again since " + back.Format("15:04:05"), Source: "scrape " + ep.URL})
			if e.now().Sub(back) >= recoveredAfter {
				// Serving for a while since: history, not news, also when
				// the engine is down again a moment later (its run not yet
				// ended; when it ends, so does this finding).
				sev = model.SevInfo
			}
		}
		title := r.title
		if r == &criticalEvent {
			title = "engine log: " + nonEmpty(x.Title, x.Kind)
		}
		out = append(out, Finding{ID: r.id, Endpoint: ep.URL, Category: r.category, Severity: sev, Title: title,
			Evidence: ev, Cause: r.cause, Actions: r.actions(x, ep)})
	}
	return out
}

// eventEvidence is the event's headline with its time, then the line.
func eventEvidence(x model.Event) []Evidence {
	src := "log (" + x.Kind + ")"
	ev := []Evidence{{Text: x.When(x.Time.Location()) + " " + nonEmpty(x.Title, x.Kind), Source: src}}
	if l := x.Line; l != "" && l != x.Title {
		if r := []rune(l); len(r) > 240 {
			l = string(r[:240]) + "…"
		}
		ev = append(ev, Evidence{Text: l, Source: src})
	}
	return ev
}

// engineFromEvents names the engine behind each endpoint's log from the
// lines in it that only one engine prints (engines.LogEngine), for
// endpoints that never answered to say who they are.
func engineFromEvents(evs []model.Event) map[string]model.Engine {
	out := map[string]model.Engine{}
	for _, x := range evs {
		if e := engines.LogEngine(x.Kind); e != model.Unknown {
			out[x.Endpoint] = e
		}
	}
	return out
}

// urlIndex is each endpoint's place in the input by its URL (the first,
// should one URL come twice), built once per evaluation: the event rules
// ask per event, the not-checked lines per endpoint, and a fleet has
// hundreds of endpoints and events.
func (e *env) urlIndex() map[string]int {
	if e.byURL == nil {
		e.byURL = make(map[string]int, len(e.all))
		for i := range e.all {
			if _, dup := e.byURL[e.all[i].URL]; !dup {
				e.byURL[e.all[i].URL] = i
			}
		}
	}
	return e.byURL
}

// endpointOf finds the endpoint an event belongs to; a log attached without
// an endpoint belongs to the only endpoint watched.
func endpointOf(e *env, url string) Endpoint {
	e.cross()
	if i, ok := e.urlIndex()[url]; ok {
		return e.all[i]
	}
	if url == "" && len(e.all) == 1 {
		return e.all[0]
	}
	return Endpoint{URL: url}
}

// eventsOf are the events of the endpoint at url (eventURL), oldest
// first; indexed once per evaluation, as the rules that read an
// endpoint's log lines ask for every endpoint.
func (e *env) eventsOf(url string) []model.Event {
	e.urlEvents = true
	if e.byEvent == nil {
		e.byEvent = map[string][]model.Event{}
		for _, x := range e.in.Events {
			u := e.eventURL(x.Endpoint)
			e.byEvent[u] = append(e.byEvent[u], x)
		}
	}
	return e.byEvent[url]
}

// events are the input's events, all of them: a rule judging one
// endpoint that reads them depends on every endpoint's (kept.go); eventsOf
// is one endpoint's.
func (e *env) events() []model.Event {
	e.allEvents = true
	return e.in.Events
}

// eventURL is the endpoint an event belongs to (endpointOf's URL, without
// the look-up): its own, or the only endpoint's when it names none.
func (e *env) eventURL(url string) string {
	if url == "" && len(e.all) == 1 {
		return e.all[0].URL
	}
	return url
}

// servedAfter is when the first run that started after t served (zero
// when none did yet), and whether that run has ended since.
func servedAfter(runs []model.Run, t time.Time) (time.Time, bool) {
	for _, r := range runs {
		if r.Started.After(t) && r.Summary.Samples > 0 {
			return r.Started, r.Ended != nil
		}
	}
	return time.Time{}, false
}

// servingNow reports whether the endpoint answers with metrics and says it
// is healthy.
func servingNow(ep Endpoint) bool {
	return !ep.isDown() && ep.State.Samples > 0 && (ep.Identity.Health == model.HealthUp || ep.Identity.Health == "")
}

// servingSince is when the endpoint came back (a restart seen in its
// counters, or up again after being down), zero when it is not serving now
// or never went away.
func servingSince(ep Endpoint) time.Time {
	if !servingNow(ep) {
		return time.Time{}
	}
	t := ep.UpSince
	if n := len(ep.State.Restarts); n > 0 && ep.State.Restarts[n-1].After(t) {
		t = ep.State.Restarts[n-1]
	}
	return t
}
