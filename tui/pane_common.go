package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// absentView is a pane's whole view when its data is absent: the reason,
// wrapped to the pane's width so that the error and its hint stay
// readable in a narrow pane; ok is false when the data is there.
func absentView(d *Data, w int) (view string, ok bool) {
	why := absentReason(d)
	if why == "" {
		return "", false
	}
	return d.Styles.Faint.Render(ansi.Wrap(why, max(10, w), " ")), true
}

// absentReason says in one line why the engine panes have nothing to show,
// or "" when there is data.
func absentReason(d *Data) string {
	if _, ok := d.Key(); ok {
		return ""
	}
	if err, ok := d.Sources["engine"]; ok && err != "" {
		return "engine source not running: " + err
	}
	if len(d.Sources) > 0 {
		if _, ok := d.Sources["engine"]; !ok {
			return "no engine source in this build: nothing scrapes the endpoints"
		}
	}
	e := d.Endpoint()
	switch {
	case len(d.Endpoints()) == 0:
		return "no endpoint to watch"
	case e == nil || e.Scrapes == 0:
		return "waiting for the first scrape of " + d.SelectedURL()
	case e.Err != "":
		s := "no metrics: " + e.Err
		if e.Hint != "" {
			s += " — " + e.Hint
		}
		return s
	default:
		if sp := engines.Of(e.Identity.Engine); sp != nil && sp.Idle != "" {
			return sp.Idle
		}
		return "the endpoint answered but published no metrics for a model"
	}
}

// engineName is the selected endpoint's engine for "not exposed by …".
func engineName(d *Data) string {
	if e := d.Endpoint(); e != nil && e.Identity.Engine != "" {
		if s := engines.Of(e.Identity.Engine); s != nil {
			return s.Name
		}
		return string(e.Identity.Engine)
	}
	return "this engine"
}

// metricRow lays out "label spark value" in w cells: the label and the
// value keep their width, the sparkline takes the rest (none when narrow).
func metricRow(label string, labelW int, pts []model.Point, ceil float64, value string, w int) string {
	vw := ansi.StringWidth(value)
	sw := w - labelW - vw - 2
	var b strings.Builder
	b.WriteString(fit(label, labelW))
	b.WriteByte(' ')
	if sw >= 6 {
		b.WriteString(sparkline(pts, sw, ceil))
		b.WriteByte(' ')
	}
	b.WriteString(value)
	return b.String()
}

// bar is a w-cell horizontal bar for a 0–1 fraction.
func bar(frac float64, w int) string {
	if w <= 0 {
		return ""
	}
	frac = max(0, min(1, frac))
	n := int(frac*float64(w) + 0.5)
	return strings.Repeat("█", n) + strings.Repeat("░", w-n)
}

// noKeys is for panes without keys of their own.
func noKeys() []key.Binding { return nil }

// lines turns a list into a pane's content, at most h lines.
func lines(ls []string, h int) string {
	if len(ls) > h {
		ls = ls[:max(0, h)]
	}
	return strings.Join(ls, "\n")
}
