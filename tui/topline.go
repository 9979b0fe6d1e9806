package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The diagnosis is always in sight: every layout shows the top open
// finding on a line of its own under the header, and the pane holding
// findings is marked in the tab bar and in its box title.

// topFinding is the finding the screen leads with: the first of the
// report (ranked by severity) that nobody acknowledged.
func topFinding(d *Data) (diagnosis.Finding, bool) {
	for _, f := range d.Core.Report().Findings {
		if !d.Core.Acked(f) {
			return f, true
		}
	}
	return diagnosis.Finding{}, false
}

// outranking are the conditions forming that are more severe than the top
// open finding (all of them when none is open) and have held half their
// hold (10 s at most): a WARN on its way must not hide behind an open INFO
// such as a planned restart, and a blip of one refresh does not lead.
func outranking(d *Data) []diagnosis.Pending {
	rep := d.Core.Report()
	var out []diagnosis.Pending
	f, ok := topFinding(d)
	for _, p := range rep.Pending {
		if p.Held < min(p.Hold/2, 10*time.Second) {
			continue
		}
		if !ok || p.Severity > f.Severity {
			out = append(out, p)
		}
	}
	return out
}

// topLine is the top finding's title and first action in its severity's
// colour, each line exactly w cells: one line when both fit, else the
// action on a second line (cut only there); nil when no finding is open.
func topLine(d *Data, w int) []string {
	f, ok := topFinding(d)
	s := d.Styles
	if ps := outranking(d); ok && len(ps) > 0 {
		// The forming condition leads, said to be forming, with how long
		// it has held of what it needs; the open finding is one of the +N.
		p := ps[0]
		f = p.Finding
		f.Title = fmt.Sprintf("forming: %s (%s of %s)", whose(d, f), shortDur(p.Held.Round(time.Second)), shortDur(p.Hold))
	} else if ok {
		f.Title = whose(d, f)
	}
	if !ok {
		if n := len(d.Core.Report().Findings); n > 0 {
			// all acknowledged or silenced: said, not hidden
			return []string{fit(s.Faint.Render(fmt.Sprintf(" %d finding(s) open, all acknowledged or silenced (%s lists them)", n, d.Keys.Diagnose.Help().Key)), w)}
		}
		return nil
	}
	st := s.Level(sevLevel(f.Severity))
	more := ""
	if n := openCount(d) - 1; n > 0 {
		more = fmt.Sprintf(" (+%d: %s)", n, d.Keys.Diagnose.Help().Key)
	}
	tag := s.Badge(sevLevel(f.Severity)).Render(" "+f.Severity.Tag()+" ") + " "
	title, action := model.Clean(f.Title), ""
	if len(f.Actions) > 0 {
		action = "→ " + model.Clean(f.Actions[0].Change)
	}
	room := max(1, w-width(tag)-len(more))
	if action == "" || ansi.StringWidth(title)+1+ansi.StringWidth(action) <= room {
		one := strings.TrimSpace(title + " " + action)
		return []string{fit(tag+st.Render(clipWords(one, room))+s.Faint.Render(more), w)}
	}
	// the action under the title, indented just enough to read as its
	// continuation: at 80 columns every cell counts
	pad := "  "
	return []string{
		fit(tag+st.Render(clipWords(title, room))+s.Faint.Render(more), w),
		fit(pad+st.Render(clipWords(action, max(1, w-len(pad)))), w),
	}
}

// whose names the endpoint a finding is about when it is not the one on
// screen (a fleet's other replica): "prod/vllm-003: TTFT over SLO", so
// that another replica's finding never reads as this one's. Findings
// about no endpoint (the fleet's, a GPU's) and this endpoint's are as they
// are.
func whose(d *Data, f diagnosis.Finding) string {
	if f.Endpoint == "" || len(d.Endpoints()) < 2 {
		return f.Title
	}
	if e := d.Endpoint(); e != nil && e.URL == f.Endpoint {
		return f.Title
	}
	name := f.Endpoint
	if e := d.Info(f.Endpoint); e != nil {
		name = e.Name()
	}
	return model.Clean(name) + ": " + f.Title
}

// openCount is how many findings are open and not acknowledged.
func openCount(d *Data) int {
	n := 0
	for _, f := range d.Core.Report().Findings {
		if !d.Core.Acked(f) {
			n++
		}
	}
	return n
}

// Alerter is a pane that can hold something needing attention: the tab
// bar and the box title mark it with the level and a short word.
type Alerter interface {
	Alert(d *Data) (Level, string)
}

// Alert is the mark a pane's title carries ("" when none): how many
// findings are open at each severity, worst first ("1 CRIT · 11 WARN",
// never "12 CRIT" for one critical among warnings).
func (findingsPane) Alert(d *Data) (Level, string) {
	var crit, warn int
	for _, f := range d.Core.Report().Findings {
		if d.Core.Acked(f) {
			continue
		}
		switch f.Severity {
		case model.SevCrit:
			crit++
		case model.SevWarn:
			warn++
		}
	}
	switch {
	case crit > 0 && warn > 0:
		return LevelCrit, fmt.Sprintf("%d CRIT · %d WARN", crit, warn)
	case crit > 0:
		return LevelCrit, fmt.Sprintf("%d CRIT", crit)
	case warn > 0:
		return LevelWarn, fmt.Sprintf("%d WARN", warn)
	}
	return LevelNone, ""
}
