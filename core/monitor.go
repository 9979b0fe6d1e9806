package core

import (
	"strings"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// Options configure a Monitor.
type Options struct {
	// Endpoints are the watched endpoints in the order given (more are
	// added as scrapes of others arrive).
	Endpoints []string
	// Window is the span rates and percentiles cover for the diagnosis.
	Window    time.Duration
	Diagnosis diagnosis.Config
	Store     model.StoreConfig
	// Events and LogLines bound the rings (defaults 500 and 10000).
	Events, LogLines int
	// FromScratch has the rules judge every endpoint at every evaluation,
	// keeping no verdict of a steady one (diagnosis.Diagnoser.FromScratch),
	// and works every run's summary out from the history: the tests hold
	// what is kept equal to it.
	FromScratch bool
}

// Versions count changes per kind of input, so a face can cache what it
// derives until its input changes.
type Versions struct {
	Store, GPU, Events, Logs, Report uint64
}

// Monitor is the headless core: see the package comment.
type Monitor struct {
	opts   Options
	store  *model.Store
	eps    map[string]*Endpoint
	order  []string
	events *EventLog
	logs   *LogRing
	gpu    *model.GPUSnapshot
	// fromLog counts stats samples parsed from logs; logsOn says a log
	// source is attached.
	fromLog int
	logsOn  bool

	dg    *diagnosis.Diagnoser
	rep   diagnosis.Report
	bench *diagnosis.Bench
	// ownLength is, by endpoint, how many requests llmtop's own benchmark
	// sent with ignore_eos have finished in the window (SetOwnLength).
	ownLength map[string]float64
	evalAt    time.Time
	evalVer   uint64
	evals     uint64
	ran       bool
	// runMoved: a run began or ended since the rules last ran.
	runMoved bool
	// scraped: a scrape came since the rules last ran; scrapeEvalAt is
	// when a scrape last ran them (see Tick).
	scraped      bool
	scrapeEvalAt time.Time
	// inputs counts what Apply took; tickInputs, the count at the last
	// Tick (equal: this Tick is the clock's).
	inputs, tickInputs uint64

	now time.Time
	ver Versions

	open       map[findingKey]openFinding // the findings open at the last evaluation
	wasOpen    map[findingKey]openFinding // the set before, its memory reused
	acks       map[ackKey]bool            // acknowledged findings, this run of their endpoint
	silences   map[string]time.Time       // rule ID → silenced until
	ranked     []diagnosis.Finding        // the rules' ranking, before the acknowledged go last
	preempting map[model.Key]bool
	buf        []model.Point
	series     map[model.Key]*diagnosis.SeriesBuf // the rules' series, reused every refresh
	inEps      []diagnosis.Endpoint               // the rules' endpoints, reused every refresh
	inSeen     map[string]bool                    // input's endpoints seen, reused
	keys       []model.Key                        // primaryKey's, reused
	evalKeys   []model.Key                        // the model keys the rules judged at the last evaluation
}

// New returns a Monitor with nothing seen yet.
func New(o Options) *Monitor {
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	if o.Events <= 0 {
		o.Events = 500
	}
	if o.LogLines <= 0 {
		o.LogLines = 10000
	}
	if o.Store.MaxWindow <= 0 {
		o.Store = model.DefaultStoreConfig
	}
	if o.Diagnosis == (diagnosis.Config{}) {
		o.Diagnosis = diagnosis.DefaultConfig()
	}
	m := &Monitor{
		opts: o, store: model.NewStore(o.Store), eps: map[string]*Endpoint{},
		events: NewEventLog(o.Events), logs: NewLogRing(o.LogLines),
		dg: diagnosis.NewDiagnoser(o.Diagnosis), open: map[findingKey]openFinding{}, wasOpen: map[findingKey]openFinding{}, preempting: map[model.Key]bool{},
		series: map[model.Key]*diagnosis.SeriesBuf{},
	}
	if o.FromScratch {
		m.dg.FromScratch()
	}
	for _, u := range o.Endpoints {
		m.endpoint(u)
	}
	return m
}

// Store is the samples' history (read it; only the Monitor feeds it).
func (m *Monitor) Store() *model.Store { return m.store }

// Events is the event log, newest last.
func (m *Monitor) Events() *EventLog { return m.events }

// Logs holds the newest log lines.
func (m *Monitor) Logs() *LogRing { return m.logs }

// GPU is the newest GPU snapshot (nil before any).
func (m *Monitor) GPU() *model.GPUSnapshot { return m.gpu }

// FromLog counts stats samples parsed from logs.
func (m *Monitor) FromLog() int { return m.fromLog }

// LogsOn reports whether a log is attached (a line or stats sample seen,
// or SetLogsOn).
func (m *Monitor) LogsOn() bool { return m.logsOn || m.logs.Len() > 0 || m.fromLog > 0 }

// SetLogsOn says a log source is attached even before its first line.
func (m *Monitor) SetLogsOn() { m.logsOn = true }

// Versions returns the change counters.
func (m *Monitor) Versions() Versions { return m.ver }

// Now is the newest time the Monitor has seen (a message or a tick).
func (m *Monitor) Now() time.Time { return m.now }

// Window is the span the diagnosis reads.
func (m *Monitor) Window() time.Duration { return m.opts.Window }

// SetWindow changes the span the diagnosis reads; the rules run again.
func (m *Monitor) SetWindow(w time.Duration) {
	if w > 0 && w != m.opts.Window {
		m.opts.Window = w
		m.ver.Store++
	}
}

// SetOwnLength tells the rules how many of the requests finished at url
// in the window llmtop's own benchmark sent with ignore_eos (they finish
// with reason length by design; the finish_length rule leaves them out).
func (m *Monitor) SetOwnLength(url string, n float64) {
	if m.ownLength == nil {
		m.ownLength = map[string]float64{}
	}
	m.ownLength[url] = n
}

// Config is the diagnosis configuration in use.
func (m *Monitor) Config() diagnosis.Config { return m.opts.Diagnosis }

// URLs lists the endpoints in the order first given or seen. The slice is
// the Monitor's own, clipped (read it, do not write it; an endpoint added
// later is appended past it, one forgotten leaves it as it was): the
// screen asks for it several times a frame, and a fleet's copy each time
// was a megabyte of garbage per refresh.
func (m *Monitor) URLs() []string { return m.order[:len(m.order):len(m.order)] }

// Endpoint returns what is known of url (nil when never seen).
func (m *Monitor) Endpoint(url string) *Endpoint { return m.eps[url] }

func (m *Monitor) endpoint(url string) *Endpoint {
	e := m.eps[url]
	if e == nil {
		e = &Endpoint{URL: url, Life: model.LifeUnknown}
		m.eps[url] = e
		m.order = append(m.order, url)
	}
	return e
}

func (m *Monitor) advance(t time.Time) {
	if t.After(m.now) {
		m.now = t
	}
}

// Apply takes one input: a source's reading, a finished benchmark, a
// person's acknowledgement or silence, a window change (model.Inputs, the
// closed set the recording encodes).
func (m *Monitor) Apply(msg model.Input) {
	m.inputs++
	switch msg := msg.(type) {
	case model.Scrape:
		m.applyScrape(msg)
		m.scraped = true
	case model.Sample:
		if msg.Source == "" {
			msg.Source = model.FromLog
		}
		if msg.Source == model.FromLog {
			m.fromLog++
			m.logEngine(msg.Endpoint, msg.Engine)
		}
		m.addSample(msg)
		m.advance(msg.Time)
		m.ver.Store++
	case model.LogLine:
		m.addLogLine(msg)
	case model.LogLines:
		for _, l := range msg {
			m.addLogLine(l)
		}
	case model.Event:
		m.addEvent(msg)
	case model.Behaviour:
		m.applyBehaviour(msg)
	case model.GPUSnapshot:
		g := msg
		m.gpu = &g
		m.advance(msg.Time)
		m.ver.GPU++
	case model.Origin:
		m.applyOrigin(msg)
	case model.Batch:
		// A fleet's refresh (the exporter and diagnose apply it as the
		// screen does).
		for _, x := range msg {
			m.Apply(x)
		}
	case model.HostReading:
		m.applyHost(msg)
	case model.Launch:
		m.applyLaunch(msg)
	case model.PortOwner:
		e := m.eps[msg.Endpoint]
		switch {
		case e == nil:
		case e.Down():
			p := msg
			e.Port = &p
			if e.Life == model.LifeUnreachable {
				e.LifeDetail = p.Describe()
			}
			m.ver.Store++
		case msg.PID > 0 && e.Current() != nil && e.Current().Ended == nil:
			// The serving process's command line is part of its run's
			// configuration (the runs view diffs it).
			setConfig(e.Current(), "cmdline", msg.Cmdline)
			e.ProcessStarted = msg.Started
			m.ver.Store++
		}
	case model.BenchDone:
		b := msg.Bench
		m.SetBench(&b, msg.Run)
	case model.Ack:
		m.advance(msg.Time)
		if msg.Undo {
			m.Unack(msg.Endpoint, msg.Finding)
		} else {
			_ = m.Ack(msg.Endpoint, msg.Finding) // a finding closed since is no longer acknowledgeable: nothing to do
		}
	case model.Silence:
		m.advance(msg.Time)
		m.Silence(msg.Rule, msg.Until)
	case model.WindowChange:
		m.advance(msg.Time)
		m.SetWindow(msg.Window)
	}
}

// addSample feeds the store and turns what it reveals into events; a
// restart it reveals starts a new run.
func (m *Monitor) addSample(sm model.Sample) {
	for _, ev := range m.store.Add(sm) {
		if ev.Kind == model.KindRestart {
			m.restarted(sm.Endpoint, ev)
		}
		m.addEvent(ev)
	}
}

func (m *Monitor) addEvent(e model.Event) {
	m.events.Add(e)
	m.ver.Events++
	m.advance(e.Time)
	switch {
	case e.Backlog && e.Source == "log":
		// A backlog's start banner is a start from before llmtop watched,
		// not one now: it starts no run (the first scrape does) and ends
		// none ("run 1 lasted 0ms"). What it says of its process's
		// configuration is kept for the run first seen.
		m.pastEvent(e)
	case e.Source == "log" || e.Category == model.CategoryLifecycle:
		m.lifecycleEvent(e)
	}
	if e.Source == "log" && !strings.Contains(e.Fields["engines"], ",") {
		m.logEngine(e.Endpoint, model.Engine(e.Fields["engines"]))
	}
}

// logEngine records the engine a log line names for its endpoint (the only
// one watched when the log carries none).
func (m *Monitor) logEngine(url string, eng model.Engine) {
	if eng == "" {
		return
	}
	if e := m.logEndpoint(model.Event{Endpoint: url}); e != nil {
		e.LogEngine = eng
	}
}

func (m *Monitor) addLogLine(l model.LogLine) {
	m.logs.Add(l)
	m.ver.Logs++
	if l.Event != nil {
		e := *l.Event
		if e.Line == "" {
			e.Line = l.Text
		}
		e.Backlog = e.Backlog || l.Backlog
		m.addEvent(e)
	}
}

// SetBench hands the newest finished benchmark to the rules and attaches it
// to the run it measured.
func (m *Monitor) SetBench(b *diagnosis.Bench, rb model.RunBench) {
	m.bench, m.ran = b, false
	if b == nil {
		return
	}
	if e := m.eps[b.URL]; e != nil {
		e.attachBench(rb)
	}
}

// Tick moves the clock to now and runs the rules when the data changed,
// the scrapes setting the pace. It reports whether they ran.
//
// A scrape runs them at once, unless a scrape ran them less than
// scrapeGap before (the other endpoints' answers to the same refresh, then
// judged with the next input): a finding opens or closes on the scrape that
// causes it. Before, the second between two runs was counted from any
// input, so a scrape answered a millisecond sooner than the last one (the
// scrapes start on the beat, their answers do not) waited a refresh, and
// so did one whose second had begun with the host's reading (read on the
// same beat, stamped later than the scrape) running the rules. The other
// inputs (log lines, the host's readings, GPU snapshots, events) wait for
// the next scrape while scrapes come: they run the rules, once a second,
// only when none has for betweenScrapes. A Tick with no input since the
// last (the clock's) runs them once a second: a log flood never runs them
// per line, a slow or failing refresh still has its log judged.
func (m *Monitor) Tick(now time.Time) bool {
	m.advance(now)
	v := m.ver.Store + m.ver.GPU + m.ver.Events
	if m.LogsOn() {
		v += 1 << 62
	}
	clock := m.inputs == m.tickInputs
	m.tickInputs = m.inputs
	// A run that began or ended runs the rules at once: the ended run's
	// findings must not stay on top of a stopped engine for the rest of
	// the second.
	due := !m.ran || m.runMoved
	second := m.now.Sub(m.evalAt) >= time.Second
	switch {
	case due:
	case v == m.evalVer:
	case m.scraped && m.now.Sub(m.scrapeEvalAt) >= scrapeGap:
		due = true
	case second && (clock || m.now.Sub(m.scrapeEvalAt) >= betweenScrapes):
		due = true
	}
	if !due {
		return false
	}
	if m.scraped {
		m.scrapeEvalAt = m.now
	}
	m.evalVer, m.scraped = v, false
	m.Evaluate(m.now)
	return true
}

// scrapeGap is how soon after a scrape ran the rules another may: the
// answers to one refresh (one endpoint's each) come within it.
const scrapeGap = 500 * time.Millisecond

// betweenScrapes is how long after a scrape last ran the rules the other
// inputs run them by themselves: a refresh and a half at the default
// second, so on a steady screen they are judged with the next scrape.
const betweenScrapes = 1500 * time.Millisecond

// Evaluate runs the rules at now whatever changed, and returns the report.
func (m *Monitor) Evaluate(now time.Time) diagnosis.Report {
	m.advance(now)
	m.expireGone(m.now)
	m.store.Settle() // the window-free States, worked out once for every reader
	m.updateRuns(m.now)
	m.evalAt, m.ran, m.runMoved = m.now, true, false
	m.evals++
	m.rep = m.dg.UpdateInPlace(m.input(m.now)) // the input is built anew every time
	m.transitions(m.rep, m.now)
	m.ranked = m.rep.Findings
	m.dropClosedAcks()
	m.annotate()
	m.preemptions()
	m.ver.Report++
	return m.rep
}

// Report is the newest diagnosis report.
func (m *Monitor) Report() diagnosis.Report { return m.rep }

// History is every finding opened, open ones and closed ones, newest first.
func (m *Monitor) History() []diagnosis.Finding { return m.dg.History() }

// Judged is how many endpoints the rules judged at the last evaluation
// (the rest kept their verdicts: nothing they read had changed).
func (m *Monitor) Judged() int { return m.dg.Judged() }

// Evaluations counts how many times the rules ran.
func (m *Monitor) Evaluations() uint64 { return m.evals }
