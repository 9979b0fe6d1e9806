package core

import (
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// Endpoint is what the Monitor knows of one endpoint: its newest scrape
// (without the samples, which are in the Store), its lifecycle and its runs.
type Endpoint struct {
	URL       string
	Identity  model.Identity
	Last      time.Time // newest scrape, successful or not
	LastOK    time.Time // newest scrape with metrics
	FirstSeen time.Time
	Err       string
	ErrKind   model.ScrapeErrKind
	Hint      string
	Took      time.Duration
	Scrapes   int

	// Life is where the engine is in its life, since LifeSince; LifeDetail
	// says more (the start-up phases, the shutdown or crash line).
	Life       model.Lifecycle
	LifeSince  time.Time
	LifeDetail string
	// Phases are the start-up steps the log showed for the current start.
	Phases []string
	// Port is /proc's word on the port while nothing answers (local
	// endpoints only); nil otherwise.
	Port *model.PortOwner
	// ProcessStarted is when /proc says the process holding a local
	// endpoint's port started (zero: not local, or not known).
	ProcessStarted time.Time
	// Runs is the ledger, oldest first; the last one is the current run
	// (or the one that ended, until the next starts).
	Runs []model.Run
	// Origin is set when another source (Prometheus) reads the endpoint
	// for llmtop (core/prometheus.go); nil for a direct scrape.
	Origin *model.Origin
	// Host is the newest reading of the machine around the engine (local
	// endpoints, sources/host); nil when none.
	Host *model.HostReading
	// LogEngine is the engine its log names (a stats line or a message
	// only one engine prints), for an endpoint that never said who it is.
	LogEngine model.Engine

	trend map[int]*diagnosis.MemTrend // per engine PID, core/host.go

	// launch is llmtop's own restart of the engine (llmtop run), waiting
	// for the run it starts.
	launch *model.Launch
	// pastConfig is what the log's backlog said of the configuration of
	// the process that wrote it last (since its last start banner; nil
	// after its shutdown or crash): most likely the process first seen
	// serving, whose run 1 carries it.
	pastConfig map[string]string
	// pastStarted: the backlog shows that process's start banner, so the
	// process first seen started before llmtop watched, and a start
	// banner read later is another process.
	pastStarted bool
	// restarting is llmtop stopping the engine to restart it (a Launch
	// with Restarting), until the new process's Launch: what does not
	// answer meanwhile is that restart, not an outage.
	restarting *model.Launch

	downSince  time.Time // first scrape of the current outage (zero: up)
	lastLive   time.Time // newest scrape that found a process answering
	sampled    bool      // the current run has fed the store
	runSamples int       // samples fed in the current run
	peaks      peaks
	// summarized is what the current run's summary was worked out from:
	// while it stands, the summary does.
	summarized summaryInputs
}

// summaryInputs are what a run's summary is read from: the store's history
// of the endpoint (its change count), the run, and the peaks and samples
// the core counted in it.
type summaryInputs struct {
	store   uint64
	run     int
	samples int
	peaks   peaks
}

type peaks struct{ kv, waiting, running model.Opt }

func (p *peaks) observe(sm model.Sample) {
	up := func(o *model.Opt, g model.Gauge) {
		if v, ok := sm.Gauges[g]; ok && (!o.OK || v > o.V) {
			*o = model.Some(v)
		}
	}
	up(&p.kv, model.KVUsage)
	up(&p.waiting, model.Waiting)
	up(&p.running, model.Running)
}

// engine is who the endpoint is: what it answered, else what its current
// run or its log said.
func (e *Endpoint) engine() model.Engine {
	if e.Identity.Engine != model.Unknown {
		return e.Identity.Engine
	}
	if r := e.Current(); r != nil && r.Engine != model.Unknown {
		return r.Engine
	}
	return e.LogEngine
}

// version is the engine's version: what it answered, else what its
// current run's log said (a V0 vLLM serves none).
func (e *Endpoint) version() string {
	if e.Identity.Version != "" {
		return e.Identity.Version
	}
	if r := e.Current(); r != nil {
		return r.Version
	}
	return ""
}

// Current returns the current run (nil before any).
func (e *Endpoint) Current() *model.Run {
	if len(e.Runs) == 0 {
		return nil
	}
	return &e.Runs[len(e.Runs)-1]
}

// Down reports whether the newest scrape found nothing answering.
func (e *Endpoint) Down() bool {
	return downKind(e.ErrKind) || e.Identity.Health == model.HealthDown
}

func downKind(k model.ScrapeErrKind) bool {
	return k == model.ErrRefused || k == model.ErrTimeout || k == model.ErrUnreachable
}

// Scrape is the newest scrape without its samples.
func (e *Endpoint) Scrape() model.Scrape {
	return model.Scrape{Endpoint: e.URL, Time: e.Last, Took: e.Took, Identity: e.Identity, Err: e.Err, ErrKind: e.ErrKind, Hint: e.Hint}
}

func (m *Monitor) applyScrape(s model.Scrape) {
	e := m.endpoint(s.Endpoint)
	if e.FirstSeen.IsZero() {
		e.FirstSeen = s.Time
	}
	prevErr := e.Err
	prevID := e.Identity
	if s.Identity.Engine != "" || len(s.Identity.Models) > 0 || s.Identity.Health != "" || s.Identity.Layer != "" {
		e.Identity = s.Identity
	}
	e.Last, e.Err, e.ErrKind, e.Hint, e.Took = s.Time, s.Err, s.ErrKind, s.Hint, s.Took
	e.Scrapes++
	if s.OK() {
		e.LastOK = s.Time
	}
	m.advance(s.Time)
	if s.Err != prevErr && (s.Err != "" || prevErr != "") && s.Identity.Layer == "" {
		ev := model.Event{Time: s.Time, Endpoint: s.Endpoint, Source: string(model.FromScrape), Kind: "scrape_recovered",
			Severity: model.SevInfo, Category: "availability", Title: "metrics readable again"}
		if s.Err != "" {
			ev.Kind, ev.Severity, ev.Title = "scrape_failed", model.SevCrit, "scrape failed: "+s.Err
			switch {
			case s.ErrKind == model.ErrAuth || s.ErrKind == model.ErrNotFound || s.ErrKind == model.ErrMalformed:
				ev.Severity = model.SevWarn
			case e.restarting != nil && downKind(s.ErrKind):
				ev.Severity, ev.Title = model.SevInfo, "not answering: "+e.restarting.RestartDetail()+": "+s.Err
			case (e.Life == model.LifeStopping || e.Life == model.LifeStopped) && downKind(s.ErrKind):
				// Its log said it shut down cleanly: not answering is that
				// stop, not a failure (it read as a red ✗ after "llama-server
				// exiting cleanly").
				ev.Severity, ev.Title = model.SevInfo, "not answering (the engine shut down cleanly): "+s.Err
			case e.Life == model.LifeStarting && downKind(s.ErrKind):
				// The engine is starting (llmtop launched it, or its log
				// says it loads): not listening yet is its start, not
				// an outage.
				ev.Severity, ev.Title = model.SevInfo, "not answering yet (engine starting): "+s.Err
			}
		}
		m.addEvent(ev)
	}

	if e.Down() {
		if e.downSince.IsZero() {
			e.downSince = s.Time
		}
	} else {
		e.Port = nil
		if len(e.Runs) == 0 || e.Current().Ended != nil && e.Current().End != model.RunRunning && e.sampled && !e.downSince.IsZero() && len(s.Samples) > 0 {
			// First seen, or back after an end the log announced and an
			// outage, with no start banner or counter reset to show it: a
			// new process. (A scrape answered by the old process just as
			// its shutdown line was read is not a return.)
			m.newRun(e, s.Time.Add(-time.Nanosecond), runStartWord(len(e.Runs)), len(e.Runs) > 0)
		}
		m.identityChange(e, prevID, s.Time)
		r := e.Current()
		r.Engine, r.Version = e.Identity.Engine, nonEmpty(e.Identity.Version, r.Version)
		// (each written only when it changed: a fleet's every scrape
		// wrote them anew)
		if len(e.Identity.Models) > 0 && !sameIDs(r.Models, e.Identity.Models) {
			r.Models = modelIDs(e.Identity)
		}
		for _, mi := range e.Identity.Models {
			if mi.MaxContext > 0 {
				var b [20]byte
				if n := strconv.AppendInt(b[:0], int64(mi.MaxContext), 10); r.Config["max_model_len"] != string(n) {
					setConfig(r, "max_model_len", string(n))
				}
				break
			}
		}
	}
	if len(s.Samples) > 0 {
		m.summarize(e, s.Time) // the run's numbers, before a restart resets the windows
	}
	for _, sm := range s.Samples {
		if sm.Endpoint == "" {
			sm.Endpoint = s.Endpoint
		}
		slotKV(e, &sm)
		m.addSample(sm)
		if c := e.Current(); c != nil {
			e.sampled = true
			e.runSamples++
			e.peaks.observe(sm)
			for k, v := range sm.Info {
				if old, ok := c.Config["info."+k]; !ok || old != v {
					setConfig(c, "info."+k, v)
				}
			}
		}
	}
	if !e.Down() {
		// After the samples: a restart they reveal ends the old run when
		// the outage began, not now.
		e.lastLive, e.downSince = s.Time, time.Time{}
	}
	m.scrapeLife(e, s)
	m.ver.Store++
}

func runStartWord(n int) string {
	if n == 0 {
		return "first seen"
	}
	return "answered again after its end"
}

// sameIDs reports whether ids are the models' IDs, in order.
func sameIDs(ids []string, models []model.ModelInfo) bool {
	if len(ids) != len(models) {
		return false
	}
	for i := range ids {
		if ids[i] != models[i].ID {
			return false
		}
	}
	return true
}

// sameModelIDs reports whether two model lists name the same IDs in order.
func sameModelIDs(a, b []model.ModelInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

func modelIDs(id model.Identity) []string {
	var out []string
	for _, mi := range id.Models {
		out = append(out, mi.ID)
	}
	return out
}

// identityChange starts a new run when the engine's version or its model
// changed without a restart being seen otherwise (a rolling redeploy behind
// the same address between two scrapes).
func (m *Monitor) identityChange(e *Endpoint, prev model.Identity, t time.Time) {
	r := e.Current()
	if r == nil || !e.sampled {
		return
	}
	switch {
	case prev.Version != "" && e.Identity.Version != "" && prev.Version != e.Identity.Version:
		m.endRun(e, t, model.RunPlanned, "version changed: "+prev.Version+" → "+e.Identity.Version, "")
		m.newRun(e, t.Add(-time.Nanosecond), "version changed", true)
	case len(prev.Models) > 0 && len(e.Identity.Models) > 0 && !sameModelIDs(prev.Models, e.Identity.Models) &&
		strings.Join(modelIDs(prev), ",") != strings.Join(modelIDs(e.Identity), ","):
		m.endRun(e, t, model.RunPlanned, "model changed: "+strings.Join(modelIDs(prev), ",")+" → "+strings.Join(modelIDs(e.Identity), ","), "")
		m.newRun(e, t.Add(-time.Nanosecond), "model changed", true)
	}
}

// scrapeLife moves the lifecycle on what a scrape found.
func (m *Monitor) scrapeLife(e *Endpoint, s model.Scrape) {
	switch {
	case !e.Down() && e.Identity.Health == model.HealthLoading:
		m.setLife(e, model.LifeStarting, s.Time, nonEmpty(e.Identity.HealthDetail, "health route: loading"))
	case !e.Down() && e.Current() != nil && e.Current().Ended != nil:
		// The ended run's process answering its last: the log's word on
		// its end stands until a new run starts.
	case !e.Down() && e.Identity.Engine == "" && s.Err != "":
		// Something answers HTTP, but no engine llmtop knows (a web page, a
		// proxy's error page): "serving" would claim an engine it has not
		// seen. The error says what answers.
	case !e.Down():
		if e.Life != model.LifeServing {
			m.setLife(e, model.LifeServing, s.Time, "")
		}
	case e.Life == model.LifeStarting || e.Life == model.LifeStopped || e.Life == model.LifeCrashed || e.Life == model.LifeStopping:
		// The log said why nothing answers: that stands.
		if e.Life == model.LifeStopping {
			e.Life = model.LifeStopped
		}
	default:
		m.setLife(e, model.LifeUnreachable, e.downSince, nonEmpty(s.Err, "no answer"))
	}
}

func (m *Monitor) setLife(e *Endpoint, l model.Lifecycle, t time.Time, detail string) {
	if e.Life != l {
		e.LifeSince = t
	}
	e.Life, e.LifeDetail = l, detail
}

// logEndpoint is the endpoint a log event belongs to: its own, or the only
// endpoint watched when the log carries none.
func (m *Monitor) logEndpoint(ev model.Event) *Endpoint {
	if ev.Endpoint != "" {
		return m.eps[ev.Endpoint]
	}
	if len(m.order) == 1 {
		return m.eps[m.order[0]]
	}
	return nil
}

// lifecycleEvent moves an endpoint's lifecycle and runs on a log line.
func (m *Monitor) lifecycleEvent(ev model.Event) {
	e := m.logEndpoint(ev)
	if e == nil {
		return
	}
	phase := ev.Fields["phase"]
	if phase == "" {
		if ev.Category == "config" {
			if r := e.Current(); r != nil {
				for k, v := range ev.Fields {
					if k != "hint" && k != "phase" && k != "engines" {
						setConfig(r, "log."+k, v)
					}
				}
			}
		}
		return
	}
	t := ev.Time
	switch phase {
	case model.PhaseStart:
		if r := e.Current(); r != nil && r.StartedBy == "log start banner" && t.Equal(r.Started) {
			return // the same line read twice (a log re-read after rotation)
		}
		switch r := e.Current(); {
		case r != nil && r.Ended == nil && !strings.Contains(r.StartedBy, "log start banner") && t.Sub(r.Started) < logLag:
			// The scrapes saw this process first (its counters reset, or it
			// answered again) and its log is read a moment later: the
			// banner names the same start.
			r.StartedBy = "log start banner; " + r.StartedBy
		default:
			if r != nil && r.Ended == nil {
				m.endRun(e, t, model.RunUnknown, "a new process started", "")
			}
			m.newRun(e, t, "log start banner", true)
		}
		e.Phases = nil
		if v := ev.Fields["version"]; v != "" {
			e.Current().Version = v
		}
		for k, v := range parseArgs(ev.Fields["args"]) { // Ollama's first line is its config
			setConfig(e.Current(), "args."+k, v)
		}
		m.setLife(e, model.LifeStarting, t, "process started")
	case model.PhaseConfig:
		if r := e.Current(); r != nil {
			for k, v := range parseArgs(ev.Fields["args"]) {
				setConfig(r, "args."+k, v)
			}
		}
	case model.PhaseLoading, model.PhaseLoaded, model.PhaseKV, model.PhaseGraphs:
		e.Phases = append(e.Phases, ev.Title)
		if len(e.Phases) > 8 {
			e.Phases = e.Phases[len(e.Phases)-8:]
		}
		if e.Life != model.LifeServing || e.Down() {
			m.setLife(e, model.LifeStarting, t, strings.Join(e.Phases, " · "))
		}
	case model.PhaseReady:
		if r := e.Current(); r != nil && ev.Fields["version"] != "" && r.Ended == nil {
			r.Version = ev.Fields["version"]
		}
		if e.Life == model.LifeStarting && !e.Down() {
			m.setLife(e, model.LifeServing, t, "")
		}
	case model.PhaseStopping, model.PhaseStopped:
		if r := e.Current(); e.restarting != nil || r != nil && r.Ended != nil && strings.HasPrefix(r.EndReason, restartedBy) {
			// The engine llmtop is restarting says it stops (read while
			// it restarts, or a moment after): its run ended planned
			// already, and the restart is what goes on.
			return
		}
		guessed := false
		if r := e.Current(); r != nil && (r.End == model.RunRunning || r.EndGuessed) {
			guessed = r.EndGuessed
			m.endRun(e, t, model.RunPlanned, "clean shutdown", ev.Line)
		}
		l := model.LifeStopping
		if phase == model.PhaseStopped {
			l = model.LifeStopped
		}
		if e.Life != model.LifeCrashed || guessed {
			// the catalogue's words, not the raw line: the header read "clean
			// shutdown: 0.16.704.097 I srv    operator(): operator()…"
			m.setLife(e, l, t, "clean shutdown: "+nonEmpty(ev.Title, ev.Line))
		}
	case model.PhaseCrash:
		if r := e.Current(); r != nil && (r.End == model.RunRunning || r.End == model.RunUnknown || r.EndGuessed) {
			m.endRun(e, t, model.RunCrash, ev.Title, nonEmpty(ev.Line, ev.Title))
		}
		if e.Life != model.LifeCrashed {
			m.setLife(e, model.LifeCrashed, t, nonEmpty(ev.Line, ev.Title))
		}
	}
}

// pastEvent keeps what a backlog line (written before llmtop watched)
// says of its process's configuration: its start banner's and args line's
// arguments, its configuration lines. A shutdown or a crash in the backlog
// means that process is gone: what it said is dropped.
func (m *Monitor) pastEvent(ev model.Event) {
	e := m.logEndpoint(ev)
	if e == nil {
		return
	}
	switch ev.Fields["phase"] {
	case model.PhaseStart:
		e.pastConfig, e.pastStarted = map[string]string{}, true
		fallthrough
	case model.PhaseConfig:
		for k, v := range parseArgs(ev.Fields["args"]) {
			e.pastConfig = setPast(e.pastConfig, "args."+k, v)
		}
	case model.PhaseStopping, model.PhaseStopped, model.PhaseCrash:
		e.pastConfig, e.pastStarted = nil, false
		return
	case "":
		if ev.Category != "config" {
			return
		}
		for k, v := range ev.Fields {
			if k != "hint" && k != "phase" && k != "engines" {
				e.pastConfig = setPast(e.pastConfig, "log."+k, v)
			}
		}
	default:
		return
	}
	m.applyPastConfig(e)
}

func setPast(c map[string]string, k, v string) map[string]string {
	if c == nil {
		c = map[string]string{}
	}
	c[k] = v
	return c
}

// applyPastConfig gives the backlog's configuration to the first run
// llmtop saw, while it runs (a later run is a process started since).
func (m *Monitor) applyPastConfig(e *Endpoint) {
	if r := e.Current(); r != nil && r.N == 1 && r.Ended == nil {
		if e.pastStarted && !strings.Contains(r.StartedBy, "log start banner") {
			// Its banner was read: one read from now on is a new process,
			// not this one's a moment late (logLag).
			r.StartedBy += "; " + pastBanner
		}
		for k, v := range e.pastConfig {
			if r.Config[k] != v {
				setConfig(r, k, v)
			}
		}
	}
}

// pastBanner is how a run first seen says that its start banner was in the
// log before llmtop started.
const pastBanner = "log start banner before llmtop started"

// logLag is how much later than the scrapes an engine's start banner may be
// read and still name the start they saw (a log follower polls; a banner
// read any later is a new process).
const logLag = 10 * time.Second

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
