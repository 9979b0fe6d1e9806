package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterOverlay(OverlaySpec{ID: "explain", Key: DefaultKeyMap().Explain, New: func() Overlay { return &explainOverlay{} }})
}

// explainOverlay says what each metric means and where the selected
// endpoint's engine publishes it (every engine when it is unknown), plus
// the adapter's notes on this endpoint.
type explainOverlay struct{ top int }

func (*explainOverlay) Title() string { return "Explain" }
func (*explainOverlay) Keys() []key.Binding {
	return scrollKeys("scroll")
}

func (o *explainOverlay) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	return scrollKey(msg, d, &o.top), nil
}

// scrollKey moves *top a line down or up on the scroll keys; false for
// any other key.
func scrollKey(msg tea.KeyPressMsg, d *Data, top *int) bool {
	switch {
	case key.Matches(msg, d.Keys.Down):
		*top++
	case key.Matches(msg, d.Keys.Up):
		*top = max(0, *top-1)
	default:
		return false
	}
	return true
}

func (o *explainOverlay) View(d *Data, w, h int) string {
	s := d.Styles
	eng := model.Unknown
	if e := d.Endpoint(); e != nil {
		eng = e.Identity.Engine
	}
	var out []string
	head := "Every engine's source is listed (engine not known yet)."
	if eng != model.Unknown {
		head = "Sources for " + string(eng) + " (the selected endpoint)."
	}
	out = append(out, s.Faint.Render(head), "")
	for _, ex := range explanations {
		out = append(out, s.Title.Render(ex.Name))
		for _, l := range strings.Split(ansi.Wrap(ex.Meaning, max(10, w-2), " "), "\n") {
			out = append(out, "  "+l)
		}
		if len(ex.Concepts) > 0 {
			if eng != model.Unknown {
				from := ex.from(eng)
				if len(from) == 0 {
					from = []string{"not exposed: shown as " + missing}
				}
				for _, f := range from {
					out = append(out, wrapped(s.Accent, "  from: ", f, w)...)
				}
				if now := ex.readNow(d.State()); now != "" {
					out = append(out, wrapped(s.Accent, "  read now: ", now, w)...)
				}
				if ex.fromLog(d.State()) {
					// The engine does not publish it, the attached log does:
					// "not exposed" alone contradicted the value on screen.
					out = append(out, wrapped(s.Accent, "  read now: ", "the engine's log (its per-request timing lines)", w)...)
				}
			} else {
				for _, e := range engines.IDs() {
					for _, f := range ex.from(e) {
						out = append(out, wrapped(s.Faint, "  "+string(e)+": ", f, w)...)
					}
				}
			}
		}
	}
	if notes := d.State().Notes; len(notes) > 0 {
		out = append(out, "", s.Title.Render("Notes from the adapter for this endpoint"))
		for _, n := range notes {
			out = append(out, "  "+n)
		}
	}
	o.top = min(o.top, max(0, len(out)-h))
	return lines(out[o.top:], h)
}

// wrapped is a labelled line wrapped to the width, its continuation lines
// indented under the text.
func wrapped(st Ink, label, text string, w int) []string {
	pad := strings.Repeat(" ", ansi.StringWidth(label))
	var out []string
	for i, l := range strings.Split(ansi.Wrap(text, max(10, w-2-len(pad)), " "), "\n") {
		if i == 0 {
			out = append(out, st.Render(label+l))
		} else {
			out = append(out, st.Render(pad+l))
		}
	}
	return out
}
