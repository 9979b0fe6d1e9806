package tui

import (
	"regexp"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// Freshness says whether the engine numbers on screen are live. Scraped
// values older than three refresh intervals are stale: the panes dim them
// and say when they were read. While scrapes fail and the engine's log
// still delivers stats lines, the panes show those instead, labelled.
type Freshness struct {
	// Stale: the values shown are older than staleAfter.
	Stale bool
	// FromLog: the values shown come from the engine's stats log lines.
	FromLog bool
	// AsOf is when the values shown were read.
	AsOf time.Time
	// Why names what keeps the scrape from being fresh ("/metrics
	// unreadable (404)", "endpoint down (connection refused)"), or "".
	Why string
}

// logFreshFor is how long a log stats line counts as current: vLLM writes
// one every 10 s by default, so three of them.
const logFreshFor = 30 * time.Second

// staleAfter is the age past which scraped values are no longer live:
// three refresh intervals (at least 2 s, so a 250 ms interval does not
// flicker on a slow scrape).
func (d *Data) staleAfter() time.Duration { return max(3*d.Interval, 2*time.Second) }

// Fresh is the freshness of the selected key's numbers at the screen's
// clock.
func (d *Data) Fresh() Freshness {
	_ = d.State()
	return d.fresh
}

// freshMode is which picture State shows: 0 live scrape, 1 stale scrape,
// 2 the log's stats lines. It depends on the clock, so State recomputes it
// on every call (cheap) and rebuilds only when it changes.
func (d *Data) freshMode(base model.State) (int, Freshness) {
	f := Freshness{AsOf: base.Time}
	if base.Samples == 0 || d.Paused {
		return 0, f
	}
	e := d.Info(base.Key.Endpoint)
	if base.Source == model.FromLog {
		f.Why, f.FromLog = scrapeWhy(d, e), true
		f.Stale = d.olderThan(base.Time, max(logFreshFor, d.staleAfter()))
		return 2, f
	}
	if !d.olderThan(base.Time, d.staleAfter()) {
		// fresh: why it would not be is not worked out (a regexp and a
		// few strings on every State, every pane, every frame)
		return 0, f
	}
	f.Why, f.Stale = scrapeWhy(d, e), true
	if ls := d.logState(base.Key); ls.Samples > 0 && ls.Time.After(base.Time) &&
		!d.olderThan(ls.Time, max(logFreshFor, d.staleAfter())) {
		return 2, Freshness{FromLog: true, AsOf: ls.Time, Why: f.Why}
	}
	return 1, f
}

// logState is the picture from k's log stats lines (samples from a log
// carry no model name, so the endpoint's nameless key is tried too).
func (d *Data) logState(k model.Key) model.State {
	if d.logValid {
		return d.logSt
	}
	d.logSt = d.Store.StateFrom(k, model.FromLog, d.Window)
	if d.logSt.Samples == 0 && k.Model != "" {
		d.logSt = d.Store.StateFrom(model.Key{Endpoint: k.Endpoint}, model.FromLog, d.Window)
	}
	d.logValid = true
	return d.logSt
}

// fromLogState is the log's picture shown in place of stale scraped
// values: the process facts (start time, restarts, info) stay the
// scrape's.
func fromLogState(base, ls model.State) model.State {
	st := ls
	st.Key = base.Key
	st.Started, st.Restarts, st.Info = base.Started, base.Restarts, base.Info
	if st.Latency == nil {
		st.Latency = map[model.Latency]model.Dist{}
	}
	return st
}

var httpStatus = regexp.MustCompile(`\b([45]\d\d)\b`)

// scrapeWhy is why an endpoint's numbers are not fresh, in a few words;
// "" when its newest scrape is fine and recent.
func scrapeWhy(d *Data, e *EndpointInfo) string {
	if e == nil {
		return ""
	}
	code := func(def string) string {
		if m := httpStatus.FindStringSubmatch(e.Err); m != nil {
			return m[1]
		}
		return def
	}
	switch e.ErrKind {
	case model.ErrNotFound:
		return "/metrics unreadable (" + code("404") + ")"
	case model.ErrServer:
		return "/metrics unreadable (" + code("5xx") + ")"
	case model.ErrAuth:
		return "/metrics unreadable (" + code("401/403") + ")"
	case model.ErrMalformed:
		return "/metrics unreadable (not Prometheus text)"
	case model.ErrTooLarge:
		return "/metrics unreadable (too large)"
	case model.ErrStalled:
		return "/metrics unreadable (body stalled)"
	case model.ErrRedirect:
		return "/metrics unreadable (redirect)"
	case model.ErrRefused:
		return "endpoint down (connection refused)"
	case model.ErrTimeout:
		return "endpoint not answering (timeout)"
	case model.ErrUnreachable:
		return "endpoint unreachable"
	}
	if e.Err != "" {
		return "scrape failed"
	}
	if d.Stale(e) {
		return "no scrape for " + d.ageText(e.Last)
	}
	return ""
}

// freshLines marks a data pane's lines when its values are not live: log
// values get a "from log" note; stale values are dimmed under an "as of
// HH:MM:SS (20s ago)" note. Live values pass through.
func freshLines(d *Data, out []string) []string {
	f := d.Fresh()
	s := d.Styles
	switch {
	case f.FromLog && !f.Stale:
		note := "from log · stats line " + f.AsOf.Local().Format("15:04:05")
		if f.Why != "" {
			note += " · " + f.Why
		}
		return append([]string{s.Warn.Render(note)}, out...)
	case f.Stale:
		note := asOf(d, f.AsOf)
		if f.FromLog {
			note += " (from log)"
		}
		if f.Why != "" {
			note += " · " + f.Why
		}
		dim := make([]string, 0, len(out)+1)
		dim = append(dim, s.Warn.Render(note))
		for _, l := range out {
			dim = append(dim, s.Faint.Render(ansi.Strip(l)))
		}
		return dim
	}
	return out
}

// asOf is "as of 05:38:33 (20s ago)".
func asOf(d *Data, t time.Time) string {
	return "as of " + t.Local().Format("15:04:05") + " (" + d.ageText(t) + " ago)"
}

// freshExtra is the line freshLines adds (for a pane's Height).
func freshExtra(d *Data) int {
	if f := d.Fresh(); f.Stale || f.FromLog {
		return 1
	}
	return 0
}

// windowEnd says where a window ends when the values are not live:
// " to 05:38:33"; "" when they are.
func windowEnd(d *Data) string {
	out := ""
	if f := d.Fresh(); f.Stale {
		out = " to " + f.AsOf.Local().Format("15:04:05")
	}
	// A window cut short by a restart says so: it covers the new run only.
	// ("run 51s (window 1m)" read as a second window, and nested in the
	// preempt line's parentheses.)
	if e := d.Endpoint(); e != nil {
		if r := e.Current(); r != nil && r.N > 1 && !d.olderThan(r.Started, d.Window-1) { // within the window
			out += " · restarted " + d.ageText(r.Started) + " ago"
		}
	}
	return out
}
