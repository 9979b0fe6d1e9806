package tui

import (
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The diagnosis side panel and the `d` list share one Diagnoser per screen
// (its hysteresis and history must not depend on which of them renders
// first). It is keyed by the screen's Data and dropped with it.

// liveDiagnosis is one screen's Diagnoser and its newest report.
type liveDiagnosis struct {
	dg      *diagnosis.Diagnoser
	th      Thresholds
	version uint64
	at      time.Time
	rep     diagnosis.Report
	ran     bool
	runs    uint64           // how many times the rules ran (the pane's draw key)
	bench   *diagnosis.Bench // newest finished benchmark

	// open are the findings open at the newest report; events the
	// transitions not yet moved into the event log (diagnosis_events.go).
	open       map[string]diagnosis.Finding
	preempting map[model.Key]bool
	events     []model.Event
	buf        []model.Point
}

var lives = struct {
	sync.Mutex
	m map[weak.Pointer[Data]]*liveDiagnosis
}{m: map[weak.Pointer[Data]]*liveDiagnosis{}}

// liveFor returns d's diagnosis, brought up to date: the rules run again
// when the data changed and at least a second has passed on the screen's
// clock (a log flood must not run them per line).
func liveFor(d *Data) *liveDiagnosis {
	wp := weak.Make(d)
	lives.Lock()
	l := lives.m[wp]
	if l == nil {
		l = &liveDiagnosis{}
		lives.m[wp] = l
		runtime.AddCleanup(d, func(wp weak.Pointer[Data]) {
			lives.Lock()
			delete(lives.m, wp)
			lives.Unlock()
		}, wp)
	}
	lives.Unlock()
	l.refresh(d)
	return l
}

func (l *liveDiagnosis) refresh(d *Data) {
	if l.dg == nil || l.th != d.Thresholds {
		l.th = d.Thresholds
		l.dg = diagnosis.NewDiagnoser(DiagnosisConfig(d.Thresholds))
		l.ran = false
	}
	// The rules read the store, the GPUs, the events and whether a log is
	// attached: log lines alone do not run them again.
	v := d.StoreVersion + d.GPUVersion + d.EventsVersion
	if d.Logs != nil && (d.Logs.Len() > 0 || d.FromLog > 0) {
		v += 1 << 62
	}
	if l.ran && (v == l.version || d.Now.Sub(l.at) < time.Second) {
		return
	}
	l.version, l.at, l.ran = v, d.Now, true
	l.runs++
	in := diagnosisInput(d)
	in.Bench = l.bench
	l.rep = l.dg.Update(in)
	l.transitions(l.rep, d.Now)
	l.preemptions(d)
}

// DiagnosisConfig carries the screen's thresholds (config file, flags) into
// the rules; the rest are the diagnosis defaults. `llmtop diagnose` uses it
// too, so both judge by the same [thresholds].
func DiagnosisConfig(t Thresholds) diagnosis.Config {
	c := diagnosis.DefaultConfig()
	// A zero threshold is unset: the diagnosis default stays.
	dur := func(dst *time.Duration, v time.Duration) {
		if v > 0 {
			*dst = v
		}
	}
	num := func(dst *float64, v float64) {
		if v > 0 {
			*dst = v
		}
	}
	dur(&c.SLOTTFT, t.TTFTp99)
	dur(&c.SLOITL, t.ITLp99)
	num(&c.KVHigh, t.KVCrit)
	dur(&c.KVFor, t.KVFor)
	num(&c.WaitingHigh, t.WaitingHigh)
	dur(&c.WaitingFor, t.WaitingFor)
	num(&c.PreemptPS, t.PreemptPS)
	num(&c.GPUIdleUtil, t.GPUIdle)
	return c
}

// diagnosisInput gathers what the screen holds into the rules' input.
func diagnosisInput(d *Data) diagnosis.Input {
	cfg := diagnosis.DefaultConfig()
	in := diagnosis.Input{Time: d.Now, GPU: d.GPU, LogsOn: d.Logs != nil && (d.Logs.Len() > 0 || d.FromLog > 0)}
	if in.GPU != nil && len(in.GPU.GPUs) == 0 {
		in.GPU = nil
	}
	if d.Events != nil {
		for i := 0; i < d.Events.Len(); i++ {
			e := d.Events.Newest(i)
			if d.Now.Sub(e.Time) > cfg.EventWindow {
				break
			}
			in.Events = append(in.Events, e.Event)
		}
	}
	seen := map[string]bool{}
	for _, k := range d.ModelKeys() {
		info := d.Info[k.Endpoint]
		if info == nil {
			continue
		}
		seen[k.Endpoint] = true
		in.Endpoints = append(in.Endpoints, diagnosis.EndpointFromStore(d.Store, k, info.Identity, lastScrape(info), info.LastOK, d.Window))
	}
	for _, u := range d.Endpoints {
		if info := d.Info[u]; info != nil && !seen[u] {
			in.Endpoints = append(in.Endpoints, diagnosis.Endpoint{URL: u, Identity: info.Identity, Scrape: lastScrape(info), LastOK: info.LastOK})
		}
	}
	return in
}

func lastScrape(e *EndpointInfo) model.Scrape {
	return model.Scrape{Endpoint: e.URL, Time: e.Last, Took: e.Took, Identity: e.Identity, Err: e.Err, ErrKind: e.ErrKind, Hint: e.Hint}
}
