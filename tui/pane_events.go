package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterPane(PaneSpec{ID: "events", Slot: 5, New: func() Pane { return &eventsPane{} }})
}

// eventsPane: restarts, scrape failures, log events, diagnosis findings
// opening and closing, preemptions starting and stopping, and anything a
// source reports, newest first, repeats collapsed into ×N. Zoomed, each
// event's hint (what it means, what to try) shows under it.
type eventsPane struct{ top int }

func (*eventsPane) Title() string { return "Events" }
func (*eventsPane) Keys() []key.Binding {
	return scrollKeys("scroll events")
}
func (p *eventsPane) Scroll(delta int)        { p.top = max(0, p.top+delta) }
func (*eventsPane) Height(d *Data, w int) int { return max(3, min(12, d.Events.Len())) }

func (p *eventsPane) View(d *Data, w, h int) string {
	s := d.Styles
	n := d.Events.Len()
	if n == 0 {
		why := "no events yet"
		if err, ok := d.Sources["logs"]; ok && err != "" {
			why += " · log source not running: " + err
		} else if !ok && len(d.Sources) > 0 {
			// the sources line lists the log only when one is followed
			why += " · no engine log followed (--log FILE, --docker, --journal, --kube, --log-cmd); restarts and scrape failures still show"
		}
		return s.Faint.Render(why)
	}
	p.top = min(p.top, max(0, n-h))
	out := make([]string, 0, h)
	zoomed := d.Zoom == "events"
	for i := p.top; i < n && len(out) < h; i++ {
		e := d.Events.Newest(i)
		if !zoomed {
			out = append(out, eventLine(d, e, 0)...)
			continue
		}
		// Zoomed, the pane has the screen's width and the height to say
		// it all: an event and its hint wrap under themselves instead of
		// ending in "…" at 80 columns.
		out = append(out, eventLine(d, e, w)...)
		if hint := e.Fields["hint"]; hint != "" {
			for _, l := range wrapIndent("         ↳ ", "           ", hint, w) {
				out = append(out, s.Faint.Render(l))
			}
		}
	}
	return lines(out, h)
}

// eventLine is an event as one line (w 0: the pane's frame cuts it), or
// wrapped to w cells under its text.
func eventLine(d *Data, e EventEntry, w int) []string {
	s := d.Styles
	lvl := LevelOK
	mark := "·"
	switch e.Severity {
	case model.SevWarn:
		lvl, mark = LevelWarn, "!"
	case model.SevCrit:
		lvl, mark = LevelCrit, "✗"
	}
	txt := e.Title
	if e.Count > 1 {
		txt += fmt.Sprintf(" ×%d", e.Count)
	}
	// Another endpoint's event leads with its name (a replica's, as the
	// fleet calls it), where a narrow pane cannot cut it off.
	who := ""
	if sel := d.Endpoint(); len(d.Endpoints()) > 1 && e.Endpoint != "" && (sel == nil || sel.URL != e.Endpoint) {
		who = e.Endpoint
		if info := d.Info(e.Endpoint); info != nil {
			who = info.Name()
		}
		who = model.Clean(who) + ": "
	}
	// a line that was in the log before llmtop started, without a
	// timestamp of its own, is not dated now
	lead := s.Faint.Render(e.When(time.Local)) + " " + s.Level(lvl).Render(mark+" ") + s.Faint.Render(who)
	if w <= 0 {
		return []string{lead + s.Level(lvl).Render(txt)}
	}
	ls := wrapIndent(strings.Repeat(" ", ansi.StringWidth(lead)), strings.Repeat(" ", 11), txt, w)
	for i := range ls {
		if i == 0 {
			ls[i] = lead + s.Level(lvl).Render(strings.TrimPrefix(ls[i], strings.Repeat(" ", ansi.StringWidth(lead))))
		} else {
			ls[i] = s.Level(lvl).Render(ls[i])
		}
	}
	return ls
}

func sevLevel(s model.Severity) Level {
	switch s {
	case model.SevWarn:
		return LevelWarn
	case model.SevCrit:
		return LevelCrit
	}
	return LevelOK
}

// DrawKey: drawn from the event log only (see Keyed).
func (*eventsPane) DrawKey(d *Data) uint64 { return d.EventsVersion }
