package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

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
	switch {
	case key.Matches(msg, d.Keys.Down):
		o.top++
	case key.Matches(msg, d.Keys.Up):
		o.top = max(0, o.top-1)
	default:
		return false, nil
	}
	return true, nil
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
		if ex.From != nil {
			if eng != model.Unknown {
				from, ok := ex.From[eng]
				if !ok {
					from = "not exposed: shown as " + missing
				}
				out = append(out, s.Accent.Render("  from: "+from))
				if now := ex.readNow(d.State()); now != "" {
					out = append(out, s.Accent.Render("  read now: "+now))
				}
			} else {
				for _, e := range model.Engines {
					if f, ok := ex.From[e]; ok {
						out = append(out, s.Faint.Render("  "+string(e)+": "+f))
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
