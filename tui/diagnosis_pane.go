package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/diagnosis"
)

func init() {
	RegisterPane(PaneSpec{ID: "diagnosis", Slot: 6, New: func() Pane { return findingsPane{} }})
}

// newFor is how long a newly opened finding stays highlighted.
const newFor = 5 * time.Second

// findingsPane is the diagnosis side panel: findings ranked by severity,
// the top one expanded with its evidence and first actions, the newest
// highlighted for a few seconds. When all is well it shows the symptom
// table it checked and names the inputs it lacked.
type findingsPane struct{}

func (findingsPane) Title() string { return "Diagnosis" }
func (findingsPane) Keys() []key.Binding {
	k := DefaultKeyMap()
	return []key.Binding{k.Diagnose, relabel(k.Ack, "acknowledge the top finding (this run)")}
}

func (findingsPane) Height(d *Data, w int) int {
	rep := d.Core.Report()
	if len(rep.Findings) == 0 {
		// what allClear draws: headline, forming lines, the symptom
		// table, the missing inputs
		return strings.Count(allClear(d, rep, w, 64), "\n") + 1
	}
	// the forming lines that outrank it, the top finding's wrapped lines,
	// a line for each other, the hint
	return max(9, len(formingLines(d, w))+len(topLines(d, rep.Findings[0], w))+len(rep.Findings))
}

// formingLines are the conditions forming that outrank the top open
// finding (two at most): above it, so a WARN on its way is not hidden
// under an open INFO.
func formingLines(d *Data, w int) []string {
	var out []string
	for i, p := range outranking(d) {
		if i == 2 {
			break
		}
		out = append(out, pendingLine(d, p, w))
	}
	return out
}

func (findingsPane) View(d *Data, w, h int) string {
	s := d.Styles
	rep := d.Core.Report()
	if len(rep.Findings) == 0 {
		return allClear(d, rep, w, h)
	}
	out := append(formingLines(d, w), topLines(d, rep.Findings[0], w)...)
	rest := rep.Findings[1:]
	// The top finding's detail first; the others get at least three lines
	// (the last "+N more" when they do not fit), so the detail is cut only
	// when the pane is truly full.
	if room := h - min(len(rest), 3); len(out) > room && room >= 2 {
		out = out[:room]
	}
	for i, f := range rest {
		if len(out) == h-1 && i < len(rest)-1 {
			out = append(out, s.Faint.Render(fmt.Sprintf("+%d more: d for the full list", len(rest)-i)))
			break
		}
		out = append(out, findingLine(d, f, w))
	}
	if len(out) < h {
		out = append(out, s.Faint.Render(clip("d: evidence, actions and history for every finding", w)))
	}
	return lines(out, h)
}

// findingLine is one finding on one line; a new one is highlighted.
func findingLine(d *Data, f diagnosis.Finding, w int) string {
	s := d.Styles
	f.Title = whose(d, f)
	if f.Acked || !f.SilencedUntil.IsZero() {
		word := " (ack)"
		if !f.Acked {
			word = " (silenced)"
		}
		return s.Faint.Render(f.Severity.Tag() + " " + clip(f.Title, max(1, w-5-len(word))) + word)
	}
	title := clip(f.Title, max(1, w-5))
	if !d.olderThan(f.Opened, newFor-1) { // newer than newFor
		title = s.Highlight.Render(title)
	}
	return s.Level(sevLevel(f.Severity)).Render(f.Severity.Tag()) + " " + title
}

// topLines is the top finding expanded: title, evidence, the first two
// actions.
func topLines(d *Data, f diagnosis.Finding, w int) []string {
	s := d.Styles
	out := []string{findingLine(d, f, w)}
	for i, e := range f.Evidence {
		if i == 3 {
			break
		}
		for _, l := range wrapIndent("  ", "  ", e.Text, w) {
			out = append(out, s.Faint.Render(l))
		}
	}
	for i, a := range f.Actions {
		if i == 2 {
			break
		}
		for _, l := range wrapIndent("→ ", "  ", a.Change, w) {
			out = append(out, s.Accent.Render(l))
		}
	}
	return out
}

// wrapIndent wraps plain text at word boundaries to w cells, the first
// line led by first and the others by rest (a word longer than the line
// is broken). Each line has the room its own lead leaves: the rest wrapped
// at the first's room left "not checked: …" lines half empty, and a rest
// wider than first ran past w.
func wrapIndent(first, rest, text string, w int) []string {
	ls := wordWrap(text, max(4, w-ansi.StringWidth(first)))
	if len(ls) > 1 && ansi.StringWidth(rest) != ansi.StringWidth(first) {
		ls = append(ls[:1], wordWrap(after(text, ls[0]), max(4, w-ansi.StringWidth(rest)))...)
	}
	for i := range ls {
		if i == 0 {
			ls[i] = first + ls[i]
		} else {
			ls[i] = rest + ls[i]
		}
	}
	return ls
}

// after is what of text follows its wrapped first line (the line's
// characters other than spaces counted off, so a word broken at the
// line's end goes on whole).
func after(text, line string) string {
	n := strings.Count(line, "") - 1 - strings.Count(line, " ")
	for i, r := range text {
		if n == 0 {
			return strings.TrimLeft(text[i:], " ")
		}
		if r != ' ' {
			n--
		}
	}
	return ""
}

// allClear says what was checked: the symptom table, and the inputs that
// were missing.
func allClear(d *Data, rep diagnosis.Report, w, h int) string {
	c := d.clearParts(rep, w)
	if c.absent != "" {
		return c.absent
	}
	out := slices.Clip(c.head)
	if c.short != "" {
		// wrapped while the pane has rows to spare: what was not checked
		// is the point of the line, cut it read "behaviour probe: not ru…"
		nc := c.nc
		if len(out)+len(nc) > h {
			nc = []string{c.short}
		}
		out = append(out, nc...)
	}
	return lines(out, h)
}

// clearParts is what allClear draws at width w before it is cut to a
// height: the findings pane's Height and View both ask for it in a frame,
// and it is drawn once (with what it read of the clock, noted again for
// the second).
type clearParts struct {
	frame  uint64
	w      int
	ok     bool
	clock  clockUse
	absent string   // an absent source's reason: all there is
	head   []string // the headline, forming lines and the symptom table
	nc     []string // what was not checked, wrapped
	short  string   // the same on one line ("" when all was checked)
}

func (d *Data) clearParts(rep diagnosis.Report, w int) *clearParts {
	c := &d.clear
	if c.ok && d.rendering && c.frame == d.frame && c.w == w {
		d.replay(c.clock)
		return c
	}
	*c = clearParts{frame: d.frame, w: w, ok: true}
	c.clock = d.noting(func() { c.draw(d, rep, w) })
	return c
}

func (c *clearParts) draw(d *Data, rep diagnosis.Report, w int) {
	s := d.Styles
	if why := absentReason(d); why != "" && len(d.Endpoints()) == 0 {
		c.absent = s.Faint.Render(why)
		return
	}
	var out []string
	switch {
	case len(rep.Pending) == 0 && d.Endpoint() == nil && len(d.Endpoints()) > 0:
		// Before the engine's first scrape only the host's checks can
		// have passed: not the all-clear a green line claims.
		out = append(out, s.Faint.Render(clip(fmt.Sprintf("no findings yet: waiting for the first scrape (%d checks so far)", len(rep.Checked)), w)))
	case len(rep.Pending) == 0:
		out = append(out, s.OK.Render(clip(fmt.Sprintf("no findings: %d checks passed", len(rep.Checked)), w)))
	default:
		out = append(out, clip(fmt.Sprintf("no findings yet (%d checks)", len(rep.Checked)), w))
		for i, p := range rep.Pending {
			if i == 2 {
				out = append(out, s.Faint.Render(fmt.Sprintf("  +%d more forming", len(rep.Pending)-i)))
				break
			}
			out = append(out, pendingLine(d, p, w))
		}
	}
	if _, ok := d.Key(); ok {
		// Values that are not live are labelled with their time and not
		// judged: "ok" for a number read before the engine died misleads.
		f := d.Fresh()
		now := "now"
		if f.Stale {
			now = "as of " + f.AsOf.Local().Format("15:04:05")
		} else if f.FromLog {
			now = "now (log)"
		}
		out = append(out, s.Faint.Render(clip(fmt.Sprintf("%-15s %8s  %-8s", "signal", now, "target"), w)))
		for _, r := range symptoms(d) {
			verdict := ""
			switch {
			case f.Stale:
			case r.verdict != "":
				verdict = r.verdict
			case r.lvl >= LevelWarn:
				verdict = "watch" // over its target, not (yet) held long enough to be a finding
			case r.lvl == LevelOK:
				verdict = "ok"
			}
			row := clip(fmt.Sprintf("%-15s %8s  %-8s ", clip(r.name, 15), r.value, r.target), max(1, w-3))
			if f.Stale {
				out = append(out, s.Faint.Render(row))
				continue
			}
			out = append(out, row+s.Level(r.lvl).Render(verdict))
		}
	}
	c.head = out
	nc := d.notCheckedAt(missingShort(rep.Missing), w)
	c.nc, c.short = nc.nc, nc.short
}

// notCheckedLines is what was not checked, as the all-clear view draws it
// at width w: wrapped (nc) and on one line (short). The list changes when
// an input comes or goes, not with every refresh, and wrapping it was a
// third of the view's draw: it is kept while the text (m), the width and
// the styles are the same. nc is shared: it is never written to.
type notCheckedLines struct {
	m      string
	w      int
	styles *Styles
	ok     bool
	nc     []string
	short  string
}

func (d *Data) notCheckedAt(m string, w int) notCheckedLines {
	k := &d.notChecked
	if k.ok && k.m == m && k.w == w && k.styles == d.Styles {
		return *k
	}
	*k = notCheckedLines{m: m, w: w, styles: d.Styles, ok: true}
	if m != "" {
		s := d.Styles
		for _, l := range wrapIndent("not checked: ", "  ", m, w) {
			k.nc = append(k.nc, s.Faint.Render(l))
		}
		k.short = s.Faint.Render(clipWords("not checked: "+m, w))
	}
	return *k
}

// missingShort names the missing inputs without their explanations.
func missingShort(missing []string) string {
	var names []string
	for _, m := range missing {
		if diagnosis.PerEndpoint(m) {
			continue // per-endpoint gaps: the full list shows them
		}
		if i := strings.Index(m, " ("); i > 0 {
			m = m[:i]
		}
		names = append(names, m)
	}
	return strings.Join(names, ", ")
}

// pendingLine is a condition holding but not yet a finding, with how long
// it has held of the time it needs.
func pendingLine(d *Data, p diagnosis.Pending, w int) string {
	s := d.Styles
	held := fmt.Sprintf(" · %s of %s", shortDur(p.Held.Round(time.Second)), shortDur(p.Hold))
	// cut after a whole word: "stall behind 819…" read as a number
	return s.Level(sevLevel(p.Severity)).Render("forming") + " " + clipWords(p.Title, max(1, w-8-len(held))) + s.Faint.Render(held)
}

// DrawKey: the findings change only when the rules run; the symptom table
// follows the store and the GPUs (see Keyed).
func (findingsPane) DrawKey(d *Data) uint64 {
	return d.ReportVersion + d.StoreVersion + d.GPUVersion
}
