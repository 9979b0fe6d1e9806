package tui

import (
	"context"
	"fmt"
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

var (
	probeRaw   = key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "raw requests/responses"))
	probeAgain = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "probe again"))
)

func (*probeOverlay) Title() string { return "Behaviour probe" }
func (*probeOverlay) Keys() []key.Binding {
	k := DefaultKeyMap()
	return []key.Binding{probeRaw, probeAgain, k.Down, k.Up}
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
		return func() tea.Msg { return b }
	}
	return nil
}

func (o *probeOverlay) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	switch {
	case key.Matches(msg, probeRaw):
		o.raw, o.top = !o.raw, 0
	case key.Matches(msg, probeAgain):
		if !o.running && o.url != "" {
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
	head := s.Faint.Render(clip(model.Clean(o.url)+" · a few small requests at temperature 0, one at a time (under 30 s) · x raw · enter again · j/k scroll", w))
	var body []string
	switch {
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
// characters count twice), the continuations indented.
func wrapLine(l string, w int) []string {
	const indent = "      "
	if w <= len(indent)+8 || ansi.StringWidth(l) <= w {
		return []string{ansi.Truncate(l, w, "…")}
	}
	pieces := strings.SplitN(ansi.Wrap(l, w, " "), "\n", 2)
	out := []string{pieces[0]}
	if len(pieces) < 2 {
		return out
	}
	rest := pieces[1]
	for _, p := range strings.Split(ansi.Wrap(rest, w-len(indent), " "), "\n") {
		out = append(out, indent+p)
	}
	return out
}

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

// ProbeLines is a probe result as plain text lines (the overlay's view and
// `llmtop probe`'s output), with the findings' titles and changes when fs
// is not nil. Everything in it from the server is cleaned.
func ProbeLines(b model.Behaviour, fs []diagnosis.Finding) []string {
	b = model.CleanBehaviour(b)
	f := b.Identity
	out := []string{fmt.Sprintf("%s · %s · model %s%s", b.Endpoint, engineLabel(b.Engine, f.EngineVersion), f.Model, orNone(" · revision ", f.Revision)),
		fmt.Sprintf("  max context %s · template %s · tokenizer %s · generation defaults %s · took %.1f s",
			intOr(f.MaxContext), orDash(f.TemplateHash), orDash(f.TokenizerHash), orDash(f.GenConfigHash), b.TookS)}
	if b.Partial != "" {
		out = append(out, "PARTIAL: "+b.Partial)
	}
	d := b.Determinism
	switch {
	case d.NotChecked != "":
		out = append(out, "determinism    "+d.NotChecked)
	case d.Identical:
		out = append(out, "determinism    ok: two identical requests at temperature 0 (seed 1234) answered the same: "+quoted(d.A))
	default:
		at := fmt.Sprintf("byte %d", d.DivergeChar)
		if d.DivergeToken.OK {
			at += fmt.Sprintf(", token %d", int(d.DivergeToken.V))
		}
		out = append(out, "determinism    DIFFERS at "+at+":", "                 1st "+quoted(d.A), "                 2nd "+quoted(d.B))
	}
	t := b.Template
	switch {
	case t.NotChecked != "":
		out = append(out, "chat template  "+t.NotChecked)
	default:
		verdict := "has its special tokens"
		if !t.Special {
			verdict = "NO SPECIAL TOKENS"
		}
		fam := "family unknown"
		if t.Family != "" {
			fam = t.Family + " (" + strings.Join(t.Expected, " ") + ")"
		}
		what := "renders"
		if t.IsSource {
			what = "template source"
		}
		out = append(out, fmt.Sprintf("chat template  %s, %s · via %s · %d token ids", verdict, fam, t.Route, len(t.TokenIDs)),
			"                 "+what+": "+quoted(t.Rendered))
	}
	if len(t.Lacks) > 0 {
		out = append(out, "                 "+engineLabel(b.Engine, "")+" lacks "+strings.Join(t.Lacks, ", "))
	}
	switch {
	case t.CompareNotChecked != "":
		out = append(out, "chat vs compl. "+t.CompareNotChecked)
	case t.SameAnswer:
		out = append(out, "chat vs compl. ok: the rendered prompt on /v1/completions answers as chat did")
	case t.Compared:
		out = append(out, "chat vs compl. DIFFER:", "                 chat "+quoted(t.ChatAnswer), "                 compl "+quoted(t.CompletionAnswer))
	}
	if b.Tokens.NotChecked != "" {
		out = append(out, "tokenization   "+b.Tokens.NotChecked)
	}
	for i, s := range b.Tokens.Samples {
		lead := "               "
		if i == 0 {
			lead = "tokenization   "
		}
		out = append(out, fmt.Sprintf("%s%-13s %3d tokens for %3d chars (estimate ≈%.0f, %.1f×)", lead, s.Name, s.Tokens, s.Runes, s.Expected, s.Ratio))
	}
	st := b.Stop
	if st.NotChecked != "" {
		out = append(out, "stop/length    "+st.NotChecked)
	} else {
		out = append(out, fmt.Sprintf("stop/length    one-word question, max_tokens %d: finish %s after %s tokens: %s", st.MaxTokens, orDash(st.Finish), optInt(st.Tokens), quoted(st.Answer)))
	}
	stops := "stop tokens: " + orDash(strings.Join(st.StopTokens, ", "))
	var defs []string
	for _, k := range sortedMapKeys(st.Defaults) {
		defs = append(defs, k+"="+st.Defaults[k])
	}
	out = append(out, "                 "+stops+" · defaults: "+orDash(strings.Join(defs, " "))+" ("+st.DefaultsFrom+")")
	r := b.Repetition
	if r.NotChecked != "" {
		out = append(out, "repetition     "+r.NotChecked)
	} else {
		line := fmt.Sprintf("repetition     unique %s %.0f %% of %d", r.Unit, r.UniqueRatio*100, r.Total)
		if r.NGram != "" {
			line += fmt.Sprintf(" · %q ×%d", r.NGram, r.NGramCount)
		}
		out = append(out, line)
	}
	if fs == nil {
		return out // the caller writes the findings its own way
	}
	out = append(out, "")
	if len(fs) == 0 {
		out = append(out, "findings: none from the checks that ran")
	}
	for _, x := range fs {
		out = append(out, fmt.Sprintf("[%s] %s", strings.ToUpper(x.Severity.String()), x.Title))
		for _, a := range x.Actions {
			out = append(out, "    → "+a.Change)
		}
	}
	return out
}

// ProbeRawLines lists the probe's requests and responses (keys redacted).
func ProbeRawLines(b model.Behaviour) []string {
	b = model.CleanBehaviour(b)
	if len(b.Raw) == 0 {
		return []string{"no raw exchanges kept"}
	}
	var out []string
	for _, x := range b.Raw {
		st := fmt.Sprint(x.Status)
		if x.Error != "" {
			st += " " + x.Error
		}
		out = append(out, fmt.Sprintf("[%s] %s %s → %s (%.0f ms)", x.Check, x.Method, x.Route, st, x.Ms))
		if x.Request != "" {
			out = append(out, "  > "+oneLineText(x.Request))
		}
		if x.Response != "" {
			out = append(out, "  < "+oneLineText(x.Response))
		}
	}
	return out
}

func engineLabel(e model.Engine, version string) string {
	s := string(e)
	if s == "" {
		s = "unknown engine"
	}
	if version != "" {
		s += " " + version
	}
	return s
}

func quoted(s string) string { return "“" + oneLineText(s) + "”" }

func oneLineText(s string) string {
	s = strings.NewReplacer("\n", "⏎", "\r", "", "\t", " ").Replace(s)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "--"
	}
	return s
}

func orNone(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func intOr(n int) string {
	if n <= 0 {
		return "--"
	}
	return fmt.Sprint(n)
}

func optInt(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	return fmt.Sprint(int(o.V))
}

func sortedMapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return sortStrings(out)
}
