package tui

import (
	"context"
	"net/url"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// benchOverlay is the `b` screen: a small form (presets quick / sweep /
// custom), a confirmation before loading a host that is not this machine,
// a progress view while it runs (b or esc cancels, aborting the requests in
// flight), then the result next to the server's own view, and the runs of
// this session.
type benchOverlay struct {
	runner BenchRunner
	stage  benchStage
	url    string

	preset, field int
	choice        [4]int // indexes into benchChoices: streams, duration, input, output

	runID    int
	cancel   context.CancelFunc
	ch       chan tea.Msg
	progress BenchProgress
	outcome  *BenchOutcome
	server   *model.MetricsJSON // the server's view over the run's window
	saved    string
	history  []benchRun
	loaded   bool // the saved runs were asked for
	top      int
}

type benchStage int

const (
	benchForm benchStage = iota
	benchConfirm
	benchRunning
	benchDone
)

var benchPresets = []struct{ name, about string }{
	{"quick", "30 s at 16 streams"},
	{"sweep", "streams 1, 2, 4 … 128 until the knee (under 2 min)"},
	{"custom", "choose streams, length and sizes below"},
}

// benchChoices are the custom fields' values: streams, duration, input
// words, output tokens.
var benchChoices = [4][]int{
	{1, 2, 4, 8, 16, 32, 64, 128, 256},
	{10, 30, 60, 120, 300},
	{64, 128, 256, 512, 1024, 2048, 4096},
	{32, 64, 128, 256, 512, 1024},
}

var benchFieldNames = [4]string{"streams", "duration s", "input words", "output tokens"}

// NewBenchOverlay builds the benchmark overlay around a runner.
func NewBenchOverlay(r BenchRunner) Overlay {
	return &benchOverlay{runner: r, choice: [4]int{4, 1, 2, 2}}
}

// benchProgressMsg, benchDoneMsg and benchSavedMsg carry the run's news,
// tagged with the run they belong to.
type benchProgressMsg struct {
	id int
	p  BenchProgress
}

type benchDoneMsg struct {
	id int
	o  BenchOutcome
}

// benchHistoryMsg brings the runs saved by earlier sessions.
type benchHistoryMsg []BenchOutcome

type benchSavedMsg struct {
	id   int
	path string
	err  error
}

func (*benchOverlay) Title() string { return "Benchmark" }

func (o *benchOverlay) Keys() []key.Binding {
	k := DefaultKeyMap() // the help and the footer show the user's (KeyMap.Current)
	switch o.stage {
	case benchForm:
		return []key.Binding{relabel(k.Confirm, "start"), relabel(k.Down, "field"), relabel(k.Increase, "change")}
	case benchConfirm:
		return []key.Binding{relabel(k.Yes, "send the load"), relabel(k.No, "back")}
	case benchRunning:
		return []key.Binding{relabel(k.Bench, "cancel")}
	}
	return []key.Binding{relabel(k.Confirm, "new run"), relabel(k.Down, "scroll")}
}

// Open targets the selected endpoint.
func (o *benchOverlay) Open(d *Data) tea.Cmd {
	if o.stage == benchRunning {
		return nil
	}
	if e := d.Endpoint(); e != nil && e.URL != "" {
		o.url = e.URL
	} else if len(d.Endpoints()) > 0 {
		o.url = d.Endpoints()[0]
	}
	if o.stage == benchConfirm {
		o.stage = benchForm
	}
	if !o.loaded {
		o.loaded = true
		runner := o.runner
		return func() tea.Msg { return benchHistoryMsg(runner.Saved(maxHistory)) }
	}
	return nil
}

const maxHistory = 10

func (o *benchOverlay) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	k := d.Keys
	switch o.stage {
	case benchForm:
		return o.formKey(msg, d)
	case benchConfirm:
		switch {
		case key.Matches(msg, k.Yes):
			return true, o.start()
		case key.Matches(msg, k.No), key.Matches(msg, k.Back):
			o.stage = benchForm
		}
		return true, nil
	case benchRunning:
		if key.Matches(msg, k.Bench) || key.Matches(msg, k.Back) {
			o.cancel() // the runner aborts the requests in flight and returns what it has
			return true, nil
		}
		return false, nil
	}
	switch {
	case key.Matches(msg, k.Confirm), key.Matches(msg, k.Runs):
		o.stage, o.top = benchForm, 0
	case key.Matches(msg, k.Down):
		o.top++
	case key.Matches(msg, k.Up):
		o.top = max(0, o.top-1)
	default:
		return false, nil
	}
	return true, nil
}

func (o *benchOverlay) formKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	k := d.Keys
	rows := 1
	if o.preset == 2 {
		rows += len(benchChoices)
	}
	switch {
	case key.Matches(msg, k.Down), key.Matches(msg, k.Focus):
		o.field = (o.field + 1) % rows
	case key.Matches(msg, k.Up), key.Matches(msg, k.FocusBack):
		o.field = (o.field + rows - 1) % rows
	case key.Matches(msg, k.Increase):
		o.change(1)
	case key.Matches(msg, k.Decrease):
		o.change(-1)
	case key.Matches(msg, k.Confirm):
		if o.url == "" {
			return true, nil
		}
		if !model.IsLoopback(o.url) {
			o.stage = benchConfirm
			return true, nil
		}
		return true, o.start()
	default:
		return false, nil
	}
	return true, nil
}

func (o *benchOverlay) change(delta int) {
	if o.field == 0 {
		o.preset = (o.preset + len(benchPresets) + delta) % len(benchPresets)
		return
	}
	f := o.field - 1
	o.choice[f] = max(0, min(len(benchChoices[f])-1, o.choice[f]+delta))
}

// spec is what the form says.
func (o *benchOverlay) spec() BenchSpec {
	s := BenchSpec{URL: o.url, Preset: benchPresets[o.preset].name, Streams: 16, Duration: 30 * time.Second, InputLen: 256, OutputLen: 128}
	if s.Preset == "custom" {
		s.Streams = benchChoices[0][o.choice[0]]
		s.Duration = time.Duration(benchChoices[1][o.choice[1]]) * time.Second
		s.InputLen, s.OutputLen = benchChoices[2][o.choice[2]], benchChoices[3][o.choice[3]]
	}
	return s
}

// start runs the benchmark in the runner from a tea.Cmd; news come back on
// a channel that wait relays as messages.
func (o *benchOverlay) start() tea.Cmd {
	o.runID++
	id, spec, runner := o.runID, o.spec(), o.runner
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan tea.Msg, 8)
	o.cancel, o.ch, o.stage = cancel, ch, benchRunning
	o.progress, o.outcome, o.server, o.saved, o.top = BenchProgress{}, nil, nil, "", 0
	return func() tea.Msg {
		go func() {
			out := runner.Run(ctx, spec, func(p BenchProgress) {
				select {
				case ch <- benchProgressMsg{id, p}:
				default: // the screen is behind: skip this one
				}
			})
			out.Spec = spec
			ch <- benchDoneMsg{id, out}
		}()
		return <-ch
	}
}

func wait(ch chan tea.Msg) tea.Cmd { return func() tea.Msg { return <-ch } }

// Receive takes the run's news.
func (o *benchOverlay) Receive(msg tea.Msg, d *Data) tea.Cmd {
	switch msg := msg.(type) {
	case benchHistoryMsg:
		var old []benchRun
		for i := len(msg) - 1; i >= 0; i-- {
			h := historyOf(msg[i])
			h.saved = msg[i].Saved
			old = append(old, h)
		}
		o.history = append(old, o.history...)
		o.trimHistory()
	case benchProgressMsg:
		if msg.id != o.runID {
			return nil
		}
		o.progress = msg.p
		return wait(o.ch)
	case benchDoneMsg:
		if msg.id != o.runID {
			return nil
		}
		o.cancel()
		out := msg.o
		o.outcome, o.stage = &out, benchDone
		o.server = serverView(d, o.url, out)
		if out.Result != nil {
			out.Result.Server = o.server
			if o.server != nil {
				out.Result.ServerEngine = serverEngine(d, o.url)
			}
			if d.Simulated {
				out.Result.MarkSimulated()
			}
		}
		o.history = append(o.history, historyOf(out))
		o.trimHistory()
		if out.Result == nil && out.Sweep == nil {
			return nil
		}
		runner, id := o.runner, o.runID
		return func() tea.Msg {
			p, err := runner.Save(out)
			return benchSavedMsg{id, p, err}
		}
	case benchSavedMsg:
		if msg.id == o.runID {
			o.saved = msg.path
			if msg.err != nil {
				o.saved = "not saved: " + msg.err.Error()
			}
			if n := len(o.history); n > 0 {
				o.history[n-1].saved = o.saved
			}
		}
	}
	return nil
}

func (o *benchOverlay) trimHistory() {
	if n := len(o.history); n > maxHistory {
		o.history = o.history[n-maxHistory:]
	}
}

// serverView is the server's own state over the run's window, from the
// monitor's scrapes of the same endpoint (nil when it exposes none).
func serverView(d *Data, target string, out BenchOutcome) *model.MetricsJSON {
	start, end := out.window()
	if start.IsZero() || d.Store == nil {
		return nil
	}
	for _, k := range d.Store.Keys() {
		if sameHost(k.Endpoint, target) {
			st := d.Store.State(k, end.Sub(start)+d.Interval)
			if st.Samples == 0 {
				return nil
			}
			var eng model.Engine
			if e := d.Info(k.Endpoint); e != nil {
				eng = e.Identity.Engine
			}
			return core.MetricsOf(st, eng)
		}
	}
	return nil
}

// serverEngine names the engine at the benchmark's target ("" when not
// known).
func serverEngine(d *Data, target string) string {
	for _, u := range d.Endpoints() {
		if !sameHost(u, target) {
			continue
		}
		if e := d.Info(u); e != nil && e.Identity.Engine != "" {
			if s := engines.Of(e.Identity.Engine); s != nil {
				return s.Name
			}
			return string(e.Identity.Engine)
		}
	}
	return ""
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host == ub.Host
}
