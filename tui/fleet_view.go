package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// fleetFindingIDs are the rules whose findings are about the fleet rather
// than one endpoint: shown above the table.
var fleetFindingIDs = map[string]bool{"routing_skew": true, "replica_outlier": true, "fleet_share": true,
	"pool_starved": true, "pool_queue_skew": true, "prefix_pileup": true, "one_worker": true, "pd_imbalance": true}

// fleetFindings are the open fleet-wide findings in a fixed order: most
// severe first, then by rule and endpoint. The report ranks newest first
// and a held finding whose condition flickers below it moves, so the lines
// reordered between frames under the reader's eyes.
func fleetFindings(all []diagnosis.Finding) []diagnosis.Finding {
	var fleet []diagnosis.Finding
	for _, f := range all {
		if fleetFindingIDs[f.ID] && f.Active() {
			fleet = append(fleet, f)
		}
	}
	sort.SliceStable(fleet, func(i, j int) bool {
		a, b := &fleet[i], &fleet[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Endpoint < b.Endpoint
	})
	return fleet
}

// View draws the summary line, the fleet-wide findings, the table's header
// and the visible rows: at most h lines of at most w cells.
func (v *fleetView) View(d *Data, w, h int) string {
	v.refresh(d)
	s := d.Styles
	out := make([]string, 0, h)
	out = append(out, fit(v.status(d), w))
	fleet := fleetFindings(d.Core.Report().Findings)
	maxF := max(1, h/6)
	for i, f := range fleet {
		if i == maxF {
			out = append(out, fit(s.Faint.Render(fmt.Sprintf("  +%d more fleet findings (d lists them)", len(fleet)-maxF)), w))
			break
		}
		lv := LevelWarn
		if f.Severity >= model.SevCrit {
			lv = LevelCrit
		} else if f.Severity < model.SevWarn {
			lv = LevelNone
		}
		out = append(out, fit(s.Level(lv).Render(sevWord(f.Severity))+" "+model.Clean(f.Title), w))
	}
	if len(v.rows) == 0 {
		out = append(out, "", fit(v.empty(d), w))
		return lines(out, h)
	}
	cols, widths := layoutFleet(w)
	out = append(out, s.Bold.Render(v.header(cols, widths, w)))
	body := h - len(out)
	v.lastPage = max(1, body)
	if len(v.shown) == 0 {
		out = append(out, fit(s.Faint.Render("no row matches the filter "+fmt.Sprintf("%q", v.filter)+" (esc clears it)"), w))
		return lines(out, h)
	}
	v.sel = min(max(0, v.sel), len(v.shown)-1)
	if body <= 0 {
		return lines(out, h)
	}
	// keep the selection in view; group headers take a line each
	if v.sel < v.top {
		v.top = v.sel
	}
	if v.sel >= v.top+body {
		v.top = v.sel - body + 1
	}
	prevPool := ""
	if v.top > 0 {
		prevPool = v.rows[v.shown[v.top-1]].poolKey
	}
	for i := v.top; i < len(v.shown) && len(out) < h; i++ {
		r := &v.rows[v.shown[i]]
		if v.group && (i == v.top || r.poolKey != prevPool) {
			out = append(out, fit(s.Accent.Render(v.poolLine(d, r.poolKey, r.pool)), w))
			if len(out) >= h {
				break
			}
		}
		prevPool = r.poolKey
		out = append(out, v.row(s, r, cols, widths, w, i == v.sel))
	}
	return lines(out, h)
}

func sevWord(s model.Severity) string {
	switch {
	case s >= model.SevCrit:
		return "CRIT"
	case s >= model.SevWarn:
		return "WARN"
	}
	return "INFO"
}

// status is the first line: the fleet's states and the view's settings.
func (v *fleetView) status(d *Data) string {
	parts := []string{v.fleetLine}
	if err := d.Sources["prometheus"]; err != "" {
		parts = append(parts, "prometheus: "+model.Clean(err))
	}
	order := "↑"
	if v.desc {
		order = "↓"
	}
	parts = append(parts, "sort "+strings.ToLower(fleetColumns[v.sortCol].title)+" "+order)
	if v.group {
		parts = append(parts, "by pool")
	}
	switch {
	case v.editing:
		parts = append(parts, "filter: "+v.filter+"▏")
	case v.filter != "":
		parts = append(parts, fmt.Sprintf("filter %q: %d of %d", v.filter, len(v.shown), len(v.rows)))
	}
	parts = append(parts, "window "+fmtDur(d.Window))
	return strings.Join(parts, " · ")
}

func (v *fleetView) empty(d *Data) string {
	if err := d.Sources["prometheus"]; err != "" {
		return "no endpoint: " + model.Clean(err)
	}
	return "no endpoint yet: waiting for the first refresh"
}

func (v *fleetView) header(cols []int, widths [fleetCols]int, w int) string {
	var b strings.Builder
	for j, c := range cols {
		if j > 0 {
			b.WriteByte(' ')
		}
		t := fleetColumns[c].title
		if c == v.sortCol {
			t += map[bool]string{true: "↓", false: "↑"}[v.desc]
		}
		b.WriteString(cell(t, widths[c], fleetColumns[c].right))
	}
	return fit(b.String(), w)
}

func (v *fleetView) row(s *Styles, r *fleetRow, cols []int, widths [fleetCols]int, w int, sel bool) string {
	r.format()
	if r.layer != "" {
		return v.layerRow(s, r, widths, w, sel)
	}
	var b strings.Builder
	for j, c := range cols {
		if j > 0 {
			b.WriteByte(' ')
		}
		text := r.cells[c]
		if c == colName {
			text = clipKeepTail(text, widths[c])
		}
		t := cell(text, widths[c], fleetColumns[c].right)
		switch {
		case sel:
		case c == colState:
			t = s.Level(r.stateLevel).Render(t)
		case c == colKV && r.kv.OK && r.kv.V >= 0.95:
			t = s.Crit.Render(t)
		case c == colFinding && r.finding != "":
			t = s.Level(r.findingLevel).Render(t)
		}
		b.WriteString(t)
	}
	line := fit(b.String(), w)
	if sel {
		line = s.Highlight.Render(line)
	}
	return line
}

// layerRow is a router's, gateway's or proxy's row: no model, no engine
// numbers of its own, so not the engines' columns (its layer's name under
// MODEL and a row of "--" read as an engine's); its name, its state, what
// layer it is, and its word or its top finding.
func (v *fleetView) layerRow(s *Styles, r *fleetRow, widths [fleetCols]int, w int, sel bool) string {
	name := cell(clipKeepTail(r.cells[colName], widths[colName]), widths[colName], false)
	state := cell(r.state, widths[colState], false)
	rest := "layer: " + r.modelName
	if r.finding != "" {
		rest += " · " + r.finding
	}
	if !sel {
		state = s.Level(r.stateLevel).Render(state)
		if r.findingLevel != LevelNone && r.sev > 0 {
			rest = s.Level(r.findingLevel).Render(rest)
		}
	}
	line := fit(name+" "+state+" "+rest, w)
	if sel {
		line = s.Highlight.Render(line)
	}
	return line
}

// clipKeepTail fits a name into n cells keeping its end, which is what
// tells replicas apart: "vllm/127.0.0.1:8001" is "vllm/1…:8001", not
// "vllm/127.0.0.…" on every row. The end kept is from the last ':' or '/',
// when it takes at most half the cells. A URL too long for the cells drops
// its "http://" first: "127.0.0.1:35639" whole, not "http://127.0.…:35639".
func clipKeepTail(t string, n int) string {
	if width(t) <= n || n < 5 {
		return t
	}
	if rest, ok := strings.CutPrefix(t, "http://"); ok {
		t = rest
		if width(t) <= n {
			return t
		}
	}
	i := strings.LastIndexAny(t, ":/")
	if i <= 0 || width(t[i:]) > n/2 {
		return t // no short end to keep: cut at the end as any cell
	}
	return ansi.Truncate(t, n-width(t[i:]), "…") + t[i:]
}

// cell pads or clips a plain string to exactly n cells.
func cell(t string, n int, right bool) string {
	if width(t) > n {
		t = ansi.Truncate(t, n, "…")
	}
	pad := n - width(t)
	if pad <= 0 {
		return t
	}
	if right {
		return strings.Repeat(" ", pad) + t
	}
	return t + strings.Repeat(" ", pad)
}
