package tui

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The behaviour probe (`o`): the overlay lives here, the I/O in cmd
// (cmd/llmtop/wire_probe.go registers the overlay with its runner). The
// probe runs in a tea.Cmd; its result goes to the core (as a
// model.Behaviour message, through the root) and stays here with its raw
// requests and responses for `x`.

// ProbeRunner probes url (the screen's endpoint ID), calling progress with
// each step's name. It blocks for at most the probe's budget.
type ProbeRunner func(ctx context.Context, url string, progress func(step string)) (model.Behaviour, error)

// NewProbeOverlay returns the `o` overlay driven by run.
func NewProbeOverlay(run ProbeRunner) Overlay { return &probeOverlay{run: run} }

type probeOverlay struct {
	run     ProbeRunner
	id      int
	url     string
	running bool
	step    string
	res     *model.Behaviour
	err     error
	raw     bool
	replay  bool // opened in a replay: nothing is sent
	top     int
	cancel  context.CancelFunc
	ch      chan tea.Msg
}

type probeStepMsg struct {
	id   int
	step string
}

type probeDoneMsg struct {
	id  int
	b   model.Behaviour
	err error
}

func (*probeOverlay) Title() string { return "Behaviour probe" }
func (*probeOverlay) Keys() []key.Binding {
	k := DefaultKeyMap()
	return []key.Binding{k.Raw, relabel(k.Confirm, "probe again"), k.Down, k.Up}
}

// Open probes the selected endpoint, unless a probe is running already.
func (o *probeOverlay) Open(d *Data) tea.Cmd {
	if o.running {
		return nil
	}
	if e := d.Endpoint(); e != nil && e.URL != "" {
		o.url = e.URL
	} else if len(d.Endpoints()) > 0 {
		o.url = d.Endpoints()[0]
	}
	if o.url == "" || o.run == nil {
		return nil
	}
	if o.replay = d.Replay != nil; o.replay {
		return nil // a replay shows what was recorded; the probe would ask the endpoint now
	}
	return o.start()
}

func (o *probeOverlay) start() tea.Cmd {
	o.id++
	id, url, run := o.id, o.url, o.run
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan tea.Msg, 4)
	o.cancel, o.ch, o.running, o.step, o.res, o.err, o.top = cancel, ch, true, "identify", nil, nil, 0
	return func() tea.Msg {
		go func() {
			b, err := run(ctx, url, func(s string) {
				select {
				case ch <- probeStepMsg{id, s}:
				default:
				}
			})
			ch <- probeDoneMsg{id, b, err}
		}()
		return <-ch
	}
}

// Receive takes the probe's progress and result; the result is handed to
// the root as a model.Behaviour, which the core files under the run.
func (o *probeOverlay) Receive(msg tea.Msg, d *Data) tea.Cmd {
	switch msg := msg.(type) {
	case probeStepMsg:
		if msg.id == o.id {
			o.step = msg.step
			return wait(o.ch)
		}
	case probeDoneMsg:
		if msg.id != o.id {
			return nil
		}
		o.cancel()
		o.running = false
		o.err = msg.err
		if msg.err != nil {
			return nil
		}
		b := msg.b
		o.res = &b
		b.Endpoint = o.url
		d.Input(b) // the root records it and the core files it under the run
		return nil
	}
	return nil
}

func (o *probeOverlay) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	switch {
	case key.Matches(msg, d.Keys.Raw):
		o.raw, o.top = !o.raw, 0
	case key.Matches(msg, d.Keys.Confirm):
		if !o.running && !o.replay && o.url != "" {
			return true, o.start()
		}
	case key.Matches(msg, d.Keys.Down):
		o.top++
	case key.Matches(msg, d.Keys.Up):
		o.top = max(0, o.top-1)
	default:
		return false, nil
	}
	return true, nil
}

func (o *probeOverlay) View(d *Data, w, h int) string {
	s := d.Styles
	head := s.Faint.Render(clip(model.Clean(o.url)+fmt.Sprintf(" · a few small requests at temperature 0, one at a time (under 30 s) · %s raw · %s again · %s/%s scroll",
		d.Keys.Raw.Help().Key, d.Keys.Confirm.Help().Key, d.Keys.Down.Help().Key, d.Keys.Up.Help().Key), w))
	var body []string
	switch {
	case o.replay:
		body = []string{"not in a replay: the probe would send requests to the recorded endpoint now (run llmtop probe URL against a live one)"}
	case o.running:
		body = []string{"probing: " + o.step + "…"}
	case o.err != nil:
		body = []string{s.Crit.Render("probe failed: ") + model.RedactText(o.err.Error())}
	case o.res == nil:
		body = []string{s.Faint.Render("no endpoint to probe")}
	case o.raw:
		body = ProbeRawLines(*o.res)
	default:
		b := o.withLogged(d)
		body = ProbeLines(b, append([]diagnosis.Finding{}, diagnosis.ProbeFindings(b)...))
	}
	// Long lines wrap (a rendered template, an action): cutting them would
	// hide what the user came for.
	var wrapped []string
	for _, l := range body {
		wrapped = append(wrapped, wrapLine(l, w)...)
	}
	top := min(o.top, max(0, len(wrapped)-(h-1)))
	o.top = top
	return lines(append([]string{head}, wrapped[top:]...), h)
}

// wrapLine cuts a plain line into pieces of at most w cells (wide
// characters count twice), the continuations indented. Each part of the
// text is wrapped once (wrapping the wrapped remainder again split its
// lines a second time, numbers included); breaks fall at spaces and after
// commas, so a JSON body keeps its numbers whole.
func wrapLine(l string, w int) []string {
	const indent = "      "
	if w <= len(indent)+8 || ansi.StringWidth(l) <= w {
		return []string{ansi.Truncate(l, w, "…")}
	}
	if minusSign.MatchString(l) && !strings.ContainsRune(l, nbHyphen) {
		// ansi.Wrap breaks after every hyphen: a minus sign ("n_predict=-1")
		// split its number over two lines. It wraps as a non-breaking
		// hyphen and is a minus again after.
		out := wrapLine(minusSign.ReplaceAllString(l, string(nbHyphen)+"$1"), w)
		for i := range out {
			out[i] = strings.ReplaceAll(out[i], string(nbHyphen), "-")
		}
		return out
	}
	first, _, _ := strings.Cut(ansi.Wrap(l, w, wrapBreaks), "\n")
	rest, ok := strings.CutPrefix(l, strings.TrimRight(first, " "))
	if !ok {
		return []string{ansi.Truncate(l, w, "…")}
	}
	out := []string{first}
	if rest = strings.TrimLeft(rest, " "); rest == "" {
		return out
	}
	for _, p := range strings.Split(ansi.Wrap(rest, w-len(indent), wrapBreaks), "\n") {
		out = append(out, indent+p)
	}
	return out
}

// nbHyphen (U+2011, one cell like "-") stands for a minus sign while a line
// wraps; minusSign finds one: a hyphen before a digit.
const nbHyphen = '\u2011'

var minusSign = regexp.MustCompile(`-([0-9])`)

// wrapBreaks are where wrapLine may break besides spaces (and hyphens,
// which ansi.Wrap always takes).
const wrapBreaks = ","

// withLogged is the result with what the core added to it from the
// engine's log (vLLM's and SGLang's generation defaults, which they do not
// serve over HTTP).
func (o *probeOverlay) withLogged(d *Data) model.Behaviour {
	b := *o.res
	if len(b.Stop.Defaults) > 0 || d.Core == nil {
		return b
	}
	runs := d.Core.RunsOf(o.url)
	if n := len(runs); n > 0 && runs[n-1].Behaviour != nil && runs[n-1].Behaviour.Time.Equal(b.Time) {
		kept := runs[n-1].Behaviour
		b.Stop.Defaults, b.Stop.DefaultsFrom, b.Identity.GenConfigHash = kept.Stop.Defaults, kept.Stop.DefaultsFrom, kept.Identity.GenConfigHash
	}
	return b
}
