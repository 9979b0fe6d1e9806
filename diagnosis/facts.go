package diagnosis

import (
	"strconv"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Start-up facts: log lines an engine prints once when it starts, stating
// its configuration. They stay true until the engine starts again, long
// after the events window has dropped them, so the Diagnoser keeps the
// newest of each kind per endpoint and hands it back to the rules. A start
// that does not print the line (chunked prefill turned off) makes the old
// one stale: a fact printed before the previous run came up belongs to an
// older start, and is dropped. Runs are seen up when first scraped and at
// each restart in the counters (State.Restarts), not when the endpoint
// answers again: a scrape timeout under load is not a restart.

// kindChunkedPrefill is the logs catalogue's id for the start-up line that
// states the step budget (vLLM's "Chunked prefill is enabled with
// max_num_batched_tokens=N."), budgetField the field it is in.
var kindChunkedPrefill, budgetField = engines.StepBudgetLine()

// factKinds are the event kinds kept as start-up facts.
var factKinds = map[string]bool{kindChunkedPrefill: true}

type factKey struct{ kind, endpoint string }

// keepFacts remembers the newest start-up fact of each kind per endpoint
// from evs and returns evs plus the remembered facts it no longer holds.
func (d *Diagnoser) keepFacts(evs []model.Event) []model.Event {
	held := map[factKey]time.Time{}
	for _, x := range evs {
		if !factKinds[x.Kind] {
			continue
		}
		k := factKey{x.Kind, x.Endpoint}
		held[k] = x.Time
		if old, ok := d.facts[k]; !ok || !x.Time.Before(old.Time) {
			d.facts[k] = x
		}
	}
	var out []model.Event
	for k, x := range d.facts {
		if t, ok := held[k]; !ok || !t.Equal(x.Time) {
			out = append(out, x)
		}
	}
	if out == nil {
		return evs
	}
	return append(out, evs...) // a new slice: the caller's is not written to
}

// sameStart: restarts seen this close together are taken for one start
// (counters found reset on two consecutive scrapes as the engine comes up),
// so the current start's fact survives. No engine loads a model this fast.
const sameStart = 20 * time.Second

// cameUp records that url's engine was up at t, first seen or restarted
// (in its counters), keeping the last two runs.
func (d *Diagnoser) cameUp(url string, t time.Time) {
	u := d.ups[url]
	n := len(u)
	if n > 0 && t.Sub(u[n-1]) < sameStart {
		return
	}
	d.ups[url] = append(append([]time.Time(nil), u[max(0, n-1):]...), t)
}

// dropStaleFacts removes the start-up facts of runs before the latest one
// (printed no later than the previous run was seen up: a line read in the
// same instant as the first scrape is that run's) from evs and from memory.
// evs is not written to.
func (d *Diagnoser) dropStaleFacts(evs []model.Event, eps []Endpoint) []model.Event {
	stale := func(x model.Event) bool {
		url := x.Endpoint
		if url == "" && len(eps) == 1 {
			url = eps[0].URL
		}
		u := d.ups[url]
		return factKinds[x.Kind] && len(u) == 2 && !x.Time.After(u[0])
	}
	for k, x := range d.facts {
		if stale(x) {
			delete(d.facts, k)
		}
	}
	var out []model.Event
	for i, x := range evs {
		if !stale(x) {
			if out != nil {
				out = append(out, x)
			}
			continue
		}
		if out == nil {
			out = append(make([]model.Event, 0, len(evs)), evs[:i]...)
		}
	}
	if out == nil {
		return evs
	}
	return out
}

// chunkedBudget is vLLM's step budget (max_num_batched_tokens) from the
// newest chunked-prefill start-up line of ep's log, with the line's time;
// ok is false when no such line was seen. The events window does not apply:
// the line is printed once per start.
func (e *env) chunkedBudget(ep Endpoint) (n int, at time.Time, ok bool) {
	for _, x := range e.eventsOf(ep.URL) {
		if x.Kind != kindChunkedPrefill || e.ahead(x.Time) {
			continue
		}
		v, err := strconv.Atoi(x.Fields[budgetField])
		if err != nil || v <= 0 {
			continue
		}
		if !ok || x.Time.After(at) {
			n, at, ok = v, x.Time, true
		}
	}
	return n, at, ok
}
