package logs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/llmtop/llmtop/beat"
	"github.com/llmtop/llmtop/model"
)

// Options configure a log source.
type Options struct {
	// Endpoint and Model label what the log belongs to (events, samples).
	Endpoint string
	Model    string
	// MaxLinesPerSec caps plain lines handed to the UI (default 20 000:
	// they travel in batches, so only a runaway log reaches it); matched
	// lines, stats and notices are not capped.
	MaxLinesPerSec int
	// QueueLines bounds lines waiting for the UI (default 10 000).
	QueueLines int
	// DisplayBytes cuts a line's shown text (default 1024); matching
	// always sees the whole line.
	DisplayBytes int
	Matcher      *Matcher         // default DefaultMatcher
	Now          func() time.Time // default time.Now
	Location     *time.Location   // zone of zone-less timestamps, default Local
	// Zone, when set, is the engine's zone for its zone-less stamps as
	// far as it is known now (the engine's process on this machine: its
	// TZ, its /etc/localtime); known false reads them in loc all the same
	// but a backlog event's time is then the engine's wall clock, marked
	// model.Event.ZoneUnknown, and a live line's stamp off its arrival is
	// another zone's (the arrival stands). Nil: Location, known.
	Zone func() (loc *time.Location, known bool)
	// StampPrefix says every line starts with the RFC 3339 time the
	// command put in front of it (docker and kubectl logs --timestamps):
	// that is the line's time, and it is cut before the line is shown
	// and matched.
	StampPrefix bool
	// Beat, when set, puts the log's periodic work on the beat grid
	// (package beat): a file is read every Beat instead of being watched
	// (FileOptions.Beat), and the second's line rate closes on the grid.
	// The monitor sets a second, its scrape's grid.
	Beat time.Duration
}

func (o *Options) defaults() {
	if o.MaxLinesPerSec <= 0 {
		o.MaxLinesPerSec = 20000
	}
	if o.QueueLines <= 0 {
		o.QueueLines = 10000
	}
	if o.DisplayBytes <= 0 {
		o.DisplayBytes = 1024
	}
	if o.Matcher == nil {
		o.Matcher = DefaultMatcher
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
}

// Stats describe a source's traffic so far.
type Stats struct {
	Lines, Matched, Dropped uint64
	// LinesPerSec is the input rate over the last full second.
	LinesPerSec float64
}

// Source turns raw lines into model messages and delivers them to send
// from its own goroutine, so neither a slow UI nor a flooding log blocks
// the other. Line and notice are called by one follower goroutine.
type Source struct {
	opts  Options
	send  func(any)
	stats *statsState

	mu       sync.Mutex
	queue    []any
	wake     chan struct{}
	st       Stats
	tokens   float64 // plain-line budget (token bucket)
	refill   time.Time
	kinds    map[string]*kindBudget
	secStart time.Time
	secLines uint64
	secDrop  uint64

	// since, when set, is when the command being followed (re)started: a
	// line whose own timestamp is older is its backlog (docker logs
	// --tail 200 prints the last 200 first). Set by the follower before
	// the command's output is read.
	since time.Time
}

// kindBudget stops one repeating error from flooding the events pane:
// beyond 20 events a second of one kind, lines are handled as plain.
type kindBudget struct {
	tokens float64
	at     time.Time
}

// NewSource returns a source that delivers through send (env.Send).
func NewSource(opts Options, send func(any)) *Source {
	opts.defaults()
	now := opts.Now()
	return &Source{
		opts: opts, send: send, stats: newStatsState(opts.Endpoint, opts.Model),
		wake: make(chan struct{}, 1), tokens: float64(opts.MaxLinesPerSec), refill: now,
		kinds: map[string]*kindBudget{}, secStart: now,
	}
}

// Line processes one raw line (without its newline).
func (s *Source) Line(raw []byte) { s.line(raw, false) }

// backlogLine processes a line that was in the log before llmtop began to
// follow it (a file's backlog): history, never now.
func (s *Source) backlogLine(raw []byte) { s.line(raw, true) }

func (s *Source) line(raw []byte, backlog bool) {
	arrival := s.opts.Now()
	text := model.SanitizeLine(raw)
	var t time.Time
	stamped := false
	if s.opts.StampPrefix {
		t, text, stamped = cutStamp(text)
	}
	zoneless := false
	if !stamped {
		loc, known := s.opts.Location, true
		if s.opts.Zone != nil {
			loc, known = s.opts.Zone()
		}
		t, stamped = stampTime(text, arrival, loc)
		if stamped && !known && !stampZoned(text) {
			zoneless = backlog
			if !backlog && arrival.Sub(t) > liveLag {
				// Logged now, stamped hours before: the engine's clock
				// reads another zone. (Within liveLag the zones agree.)
				t, stamped = arrival, false
			}
		}
	}
	if stamped && !s.since.IsZero() && t.Before(s.since) {
		backlog = true
	}
	ll := model.LogLine{Time: t, Endpoint: s.opts.Endpoint, Text: Cut(text, s.opts.DisplayBytes), Backlog: backlog}
	var samples []model.Sample
	matched := false
	if mt, ok := s.opts.Matcher.Match(text); ok {
		// Periodic stats lines become samples, not events: one every few
		// seconds would bury the events that matter.
		if mt.Pattern.Category != "stats" {
			ll.Event = mt.Event(t, s.opts.Endpoint, text)
			ll.Event.Backlog, ll.Event.Untimed = backlog, backlog && !stamped
			ll.Event.ZoneUnknown = zoneless && !ll.Event.Untimed
		}
		samples = s.stats.feed(mt, text, t)
		if backlog {
			// What a stats line says of the run stays known (vLLM's KV
			// capacity), but a backlog's numbers are no rate of now: its
			// requests all read at once were 19 000 req/s. The first
			// live sample is the store's baseline.
			samples = nil
		}
		matched = true
	}
	s.mu.Lock()
	s.count(matched, arrival)
	keep := len(samples) > 0 || ll.Event != nil && s.kindAllows(ll.Event.Kind, arrival)
	if !keep && !s.plainAllowed(arrival) {
		s.st.Dropped++
		s.secDrop++
	} else {
		s.queue = append(s.queue, ll)
	}
	for _, sm := range samples {
		if len(s.queue) < 3*s.opts.QueueLines { // only a UI stalled for minutes fills this
			s.queue = append(s.queue, sm)
		}
	}
	s.mu.Unlock()
	s.signal()
}

// notice reports something about the log source itself (waiting for a
// file, a command that exited) as a line with an event.
func (s *Source) notice(kind string, sev model.Severity, format string, args ...any) {
	now := s.opts.Now()
	// A notice quotes a path, a command line or an error: cleaned, and
	// a URL credential in a --log-cmd (curl -u, a token in a query) is
	// redacted before the screen shows it.
	title := model.RedactText(fmt.Sprintf(format, args...))
	ev := &model.Event{Time: now, Endpoint: s.opts.Endpoint, Source: "log", Kind: kind, Severity: sev,
		Category: "availability", Title: title, Line: "llmtop: " + title}
	s.mu.Lock()
	s.queue = append(s.queue, model.LogLine{Time: now, Endpoint: s.opts.Endpoint, Text: ev.Line, Event: ev})
	s.mu.Unlock()
	s.signal()
}

func (s *Source) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// count keeps the totals and the per-second rate; called with mu held.
func (s *Source) count(matched bool, now time.Time) {
	if s.secLines == 0 && s.secDrop == 0 && s.st.LinesPerSec == 0 {
		s.secStart = now // the first line after a quiet spell opens the window
	}
	s.st.Lines++
	if matched {
		s.st.Matched++
	}
	s.secLines++
}

// plainAllowed spends one token of the plain-line budget, refilled at
// MaxLinesPerSec; a full queue (the UI stalled) also refuses.
func (s *Source) plainAllowed(now time.Time) bool {
	if len(s.queue) >= s.opts.QueueLines {
		return false
	}
	rate := float64(s.opts.MaxLinesPerSec)
	s.tokens += now.Sub(s.refill).Seconds() * rate
	s.refill = now
	if s.tokens > rate {
		s.tokens = rate
	}
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}

func (s *Source) kindAllows(kind string, now time.Time) bool {
	if len(s.queue) >= 2*s.opts.QueueLines {
		return false
	}
	b := s.kinds[kind]
	if b == nil {
		b = &kindBudget{tokens: 20, at: now}
		s.kinds[kind] = b
	}
	b.tokens += now.Sub(b.at).Seconds() * 20
	b.at = now
	if b.tokens > 20 {
		b.tokens = 20
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Stats returns the traffic so far.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// Run delivers queued messages until ctx is done. A second after lines
// began to come, and every second while they come, it closes the rate
// window and, when lines were dropped, says so in the log. A quiet log
// wakes nothing: the window's timer runs only while there is traffic (and
// once more, to read the rate back to 0).
func (s *Source) Run(ctx context.Context) {
	window := time.NewTimer(time.Second)
	window.Stop()
	armed := false
	var batch []any
	for {
		s.mu.Lock()
		batch, s.queue = s.queue, batch[:0]
		busy := s.secLines > 0 || s.secDrop > 0 || s.st.LinesPerSec > 0
		s.mu.Unlock()
		if !s.deliver(ctx, batch) {
			return
		}
		clear(batch)
		if busy && !armed {
			window.Reset(s.windowWait(time.Now()))
			armed = true
		}
		select {
		case <-ctx.Done():
			window.Stop()
			return
		case <-s.wake:
		case <-window.C:
			armed = false
			s.closeSecond()
		}
	}
}

// windowWait is how long the rate's window stays open from now: a second,
// or on the beat grid the first beat at least half a second away (the rate
// divides by the time the window really took, closeSecond).
func (s *Source) windowWait(now time.Time) time.Duration {
	if s.opts.Beat <= 0 {
		return time.Second
	}
	return beat.After(now, time.Second/2, time.Second).Sub(now)
}

// deliver sends a batch in order, consecutive lines together as one
// model.LogLines (a single line as a model.LogLine), so a flooding log costs
// the UI one message per wake, not one per line. It reports false once ctx
// is done.
func (s *Source) deliver(ctx context.Context, batch []any) bool {
	var run model.LogLines
	flush := func() {
		switch len(run) {
		case 0:
		case 1:
			s.send(run[0])
		default:
			s.send(run)
		}
		run = nil
	}
	for _, m := range batch {
		if ctx.Err() != nil {
			return false
		}
		if l, ok := m.(model.LogLine); ok {
			run = append(run, l)
			continue
		}
		flush()
		s.send(m)
	}
	flush()
	return ctx.Err() == nil
}

func (s *Source) closeSecond() {
	now := s.opts.Now()
	s.mu.Lock()
	secs := now.Sub(s.secStart).Seconds()
	if secs <= 0 {
		s.mu.Unlock()
		return
	}
	rate, dropped := float64(s.secLines)/secs, s.secDrop
	s.st.LinesPerSec = rate
	s.secStart, s.secLines, s.secDrop = now, 0, 0
	s.mu.Unlock()
	if dropped > 0 {
		s.notice("log_flood", model.SevInfo, "log flood: %.0f lines/s, %d lines not shown in the last %.1f s (matched lines and stats are kept)", rate, dropped, secs)
	}
}
