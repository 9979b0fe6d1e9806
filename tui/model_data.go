package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/model"
)

// Data in: the sources' messages go to the core, and what changed is
// marked for the panes' caches; the rules run on the screen's clock.

// own files an input the screen made: recorded (Options.OnInput), then
// applied, paused or not (a person's action, or a result they asked for).
func (m *Model) own(in model.Input) {
	if m.opts.OnInput != nil {
		m.opts.OnInput(in)
	}
	m.apply(in)
	m.d.ReportVersion++
	m.d.Version++
}

// advance moves the screen clock forward (never back). What is derived
// from the store stays: the windows move with the next sample.
func (m *Model) advance(t time.Time) {
	if t.After(m.d.Now) {
		m.d.Now = t
	}
}

func (m *Model) queue(msg model.Input) {
	if len(m.queued) >= maxQueued {
		m.apply(m.queued[0]) // keep memory bounded: the oldest goes in now
		m.queued = m.queued[1:]
	}
	m.queued = append(m.queued, msg)
}

// apply feeds one data message into the core and notes what changed.
func (m *Model) apply(msg model.Input) {
	m.applyData(msg)
	m.diagnose()
}

// applyData feeds the core and marks what changed (BatchMsg applies many,
// then runs the rules once).
func (m *Model) applyData(msg model.Input) {
	d := m.d
	before := d.Core.Versions()
	d.Core.Apply(msg)
	after := d.Core.Versions()
	m.advance(d.Core.Now())
	if after.Store != before.Store {
		d.invalidate()
	}
	if after.GPU != before.GPU {
		d.touched(&d.GPUVersion)
	}
	if after.Events != before.Events {
		d.touched(&d.EventsVersion)
	}
	if after.Logs != before.Logs {
		d.touched(&d.LogsVersion)
	}
}

// diagnose lets the core run the rules (at most once a second, when the
// data changed) at the screen's clock.
func (m *Model) diagnose() {
	d := m.d
	before := d.Core.Versions()
	if !d.Core.Tick(d.Now) {
		return
	}
	if d.Core.Versions().Events != before.Events {
		d.touched(&d.EventsVersion) // findings opened or closed
	}
	d.ReportVersion++
	d.Version++
}

// broadcast passes an unknown message to every component that wants it.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, p := range m.panes {
		if r, ok := p.p.(Receiver); ok {
			cmds = append(cmds, r.Receive(msg, m.d))
		}
	}
	for _, o := range m.overlays {
		if r, ok := o.o.(Receiver); ok {
			cmds = append(cmds, r.Receive(msg, m.d))
		}
	}
	return tea.Batch(cmds...)
}
