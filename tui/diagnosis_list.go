package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterOverlay(OverlaySpec{ID: "diagnosis", Key: DefaultKeyMap().Diagnose, New: func() Overlay { return &findingsList{} }})
}

// findingsList is the `d` overlay: every open finding with its evidence
// (source and window), cause and actions (why, trade-off), then the history
// of closed ones with their opened and closed times, then what was checked
// and which inputs were missing.
//
// The focus keys (tab, shift+tab) pick a finding; the ack key acknowledges
// it for this run (again: takes it back) and the silence key silences its
// rule for an hour (again: lifts it). Both stay listed, marked, last.
type findingsList struct{ top, sel int }

func (*findingsList) Title() string { return "Diagnosis" }
func (*findingsList) Keys() []key.Binding {
	k := DefaultKeyMap()
	return append(scrollKeys("scroll"), k.Ack, k.Silence)
}

func (o *findingsList) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	fs := d.Core.Report().Findings
	o.sel = max(0, min(o.sel, len(fs)-1))
	switch {
	case key.Matches(msg, d.Keys.Focus):
		o.sel = min(len(fs)-1, o.sel+1)
	case key.Matches(msg, d.Keys.FocusBack):
		o.sel = max(0, o.sel-1)
	case key.Matches(msg, d.Keys.Ack) && len(fs) > 0:
		toggleAck(d, fs[o.sel])
	case key.Matches(msg, d.Keys.Silence) && len(fs) > 0:
		toggleSilence(d, fs[o.sel])
	case key.Matches(msg, d.Keys.Down):
		o.top++
	case key.Matches(msg, d.Keys.Up):
		o.top = max(0, o.top-1)
	default:
		return false, nil
	}
	return true, nil
}

func (o *findingsList) View(d *Data, w, h int) string {
	c := d.Core
	out := listLines(d, c.Report(), c.History(), c.Config(), w, o.sel)
	o.top = min(o.top, max(0, len(out)-h))
	return lines(out[o.top:], h)
}

func listLines(d *Data, rep diagnosis.Report, hist []diagnosis.Finding, cfg diagnosis.Config, w, sel int) []string {
	s := d.Styles
	wrap := func(prefix, text string) []string {
		var out []string
		for i, l := range strings.Split(ansi.Wrap(text, max(10, w-len(prefix)), " "), "\n") {
			if i > 0 {
				prefix = strings.Repeat(" ", len(prefix))
			}
			out = append(out, prefix+l)
		}
		return out
	}
	k := d.Keys
	out := []string{s.Faint.Render(clip(fmt.Sprintf("%d open · SLO TTFT p99 ≤ %s, TPOT/ITL p99 ≤ %s (--slo-tpot) · window %s · %s/%s scroll, %s picks, %s acknowledges, %s silences for 1h, %s closes",
		len(rep.Findings), shortDur(cfg.SLOTTFT), shortDur(cfg.SLOITL), shortDur(d.Window), k.Down.Help().Key, k.Up.Help().Key,
		k.Focus.Help().Key, k.Ack.Help().Key, k.Silence.Help().Key, k.Back.Help().Key), w)), ""}
	if n := len(d.Core.Silences()); n > 0 {
		var ss []string
		for id, t := range d.Core.Silences() {
			ss = append(ss, id+" until "+t.Local().Format("15:04"))
		}
		out = append(out[:1], s.Faint.Render(clip("silenced: "+strings.Join(sortStrings(ss), ", "), w)), "")
	}
	if len(rep.Findings) == 0 {
		out = append(out, s.OK.Render("No open findings."), "")
	}
	for i, f := range rep.Findings {
		cur := "  "
		if i == sel {
			cur = "▶ "
		}
		f.Title = whose(d, f)
		head := cur + s.Level(sevLevel(f.Severity)).Render(f.Severity.Tag()) + " " + s.Title.Render(f.Title)
		switch {
		case f.Acked || !f.SilencedUntil.IsZero():
			head = cur + s.Faint.Render(f.Severity.Tag()+" "+f.Title+" ("+quietWord(f)+")")
		case d.Clock().Sub(f.Opened) < newFor:
			head = cur + s.Level(sevLevel(f.Severity)).Render(f.Severity.Tag()) + " " + s.Highlight.Render(f.Title)
		}
		out = append(out, head)
		out = append(out, s.Faint.Render(clip(fmt.Sprintf("  %s · %s · opened %s (%s ago)", f.ID, nonEmptyStr(f.Endpoint, "all endpoints"),
			f.Opened.Local().Format("15:04:05"), shortDur(d.Clock().Sub(f.Opened).Round(time.Second))), w)))
		for _, e := range f.Evidence {
			src := e.Source
			if e.Window > 0 {
				src += ", " + shortDur(e.Window)
			}
			out = append(out, wrap("  · ", e.Text+" ["+src+"]")...)
		}
		out = append(out, wrap("  cause: ", f.Cause)...)
		for i, a := range f.Actions {
			out = append(out, s.Accent.Render(clip(fmt.Sprintf("  %d. %s", i+1, a.Change), w)))
			out = append(out, wrap("     ", "why: "+a.Why+"; trade-off: "+a.TradeOff)...)
		}
		out = append(out, "")
	}
	var closed []diagnosis.Finding
	for _, f := range hist {
		if !f.Active() {
			closed = append(closed, f)
		}
	}
	if len(closed) > 0 {
		out = append(out, s.Title.Render("History"))
		for _, f := range closed {
			out = append(out, clip(fmt.Sprintf("  %s %s → %s (%s)  %s", f.Severity.Tag(), f.Opened.Local().Format("15:04:05"),
				f.Closed.Local().Format("15:04:05"), shortDur(f.Closed.Sub(f.Opened).Round(time.Second)), f.Title), w))
		}
		out = append(out, "")
	}
	out = append(out, s.Title.Render("Checked"))
	out = append(out, wrap("  ", strings.Join(rep.Checked, "; "))...)
	if len(rep.Missing) > 0 {
		out = append(out, s.Title.Render("Not checked (input missing)"))
		for _, m := range rep.Missing {
			out = append(out, wrap("  - ", m)...)
		}
	}
	return out
}

func shortDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	d = d.Round(time.Second)
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return d.String()
}

func nonEmptyStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// quietWord says why a finding is dimmed.
func quietWord(f diagnosis.Finding) string {
	if f.Acked {
		return "acknowledged"
	}
	return "silenced until " + f.SilencedUntil.Local().Format("15:04")
}

// silenceFor is how long the silence key silences a rule.
const silenceFor = time.Hour

func toggleAck(d *Data, f diagnosis.Finding) {
	d.Input(model.Ack{Time: d.Clock(), Endpoint: f.Endpoint, Finding: f.ID, Undo: f.Acked})
}

func toggleSilence(d *Data, f diagnosis.Finding) {
	until := d.Clock().Add(silenceFor)
	if !f.SilencedUntil.IsZero() {
		until = time.Time{}
	}
	d.Input(model.Silence{Time: d.Clock(), Rule: f.ID, Until: until})
}
