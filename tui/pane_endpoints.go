package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterPane(PaneSpec{ID: "endpoints", Slot: 7, New: func() Pane { return endpointsPane{} }})
}

// endpointsPane lists every endpoint with its health, engine, models and
// newest error, and every source with why it is not running. The one on
// screen is marked ▶; with the focus, the down and up keys (and the
// wheel) choose another, down or not.
type endpointsPane struct{}

func (endpointsPane) Title() string { return "Endpoints" }
func (endpointsPane) Keys() []key.Binding {
	k := DefaultKeyMap()
	return []key.Binding{relabel(k.Down, "next endpoint"), relabel(k.Up, "previous endpoint")}
}

// Select moves the choice to the next (delta > 0) or previous endpoint
// (see Selector).
func (endpointsPane) Select(delta int, d *Data) {
	eps := d.Endpoints()
	if len(eps) < 2 || delta == 0 {
		return
	}
	cur := 0
	for i, u := range eps {
		if u == d.SelectedURL() {
			cur = i
		}
	}
	step := 1
	if delta < 0 {
		step = -1
	}
	next := eps[((cur+step)%len(eps)+len(eps))%len(eps)]
	for i, c := range d.Choices() {
		if c.Endpoint == next {
			d.Selected = i
			break
		}
	}
	d.invalidate()
}
func (endpointsPane) Height(d *Data, w int) int {
	return 2*len(d.Endpoints()) + 2
}

func (endpointsPane) View(d *Data, w, h int) string {
	s := d.Styles
	var out []string
	for _, u := range d.Endpoints() {
		e := d.Info(u)
		badge, lvl := d.Health(e)
		mark := "  "
		if u == d.SelectedURL() {
			mark = "▶ "
		}
		line := mark + s.Accent.Render(u) + " " + s.Level(lvl).Render(badge)
		if e != nil {
			id := e.Identity
			models := []string{}
			for _, m := range id.Models {
				models = append(models, m.ID)
			}
			line += fmt.Sprintf("  %s %s  models: %s", id.Engine, id.Version, strings.Join(models, ", "))
			detail := fmt.Sprintf("   scrapes %d · last took %s", e.Scrapes, fmtDur(e.Took))
			if e.Origin != nil && e.Origin.Source == model.SourcePrometheus {
				// llmtop never scraped it: no scrape time was measured
				detail = fmt.Sprintf("   read via Prometheus · %d refreshes", e.Scrapes)
			}
			if e.Err != "" {
				detail += " · " + s.Crit.Render(e.Err)
				if e.Hint != "" {
					detail += " — " + e.Hint
				}
			}
			out = append(out, line, s.Faint.Render(detail))
			continue
		}
		out = append(out, line)
	}
	if len(d.Sources) > 0 {
		names := make([]string, 0, len(d.Sources))
		for n := range d.Sources {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := []string{}
		sel := d.Endpoint()
		for _, n := range names {
			err := d.Sources[n]
			if g := d.GPU(); n == "gpu" && err == "" && g != nil && g.Err != "" {
				// the source runs but reads nothing: no driver, --no-gpu
				err, _, _ = strings.Cut(model.Clean(g.Err), ":")
			}
			if err != "" {
				parts = append(parts, n+" "+s.Warn.Render("✗ "+err))
			} else if sel != nil && sel.Origin != nil && originLacks(sel.Origin, n) {
				// running, but not for this replica: "ok" would claim it
				parts = append(parts, n+" "+s.Faint.Render("n/a for "+model.Clean(sel.Name())))
			} else {
				parts = append(parts, n+" "+s.OK.Render("ok"))
			}
		}
		out = append(out, "sources: "+strings.Join(parts, " · "))
	}
	if d.FromLog() > 0 {
		noun := "stats samples"
		if d.FromLog() == 1 {
			noun = "stats sample"
		}
		out = append(out, s.Faint.Render(fmt.Sprintf("%d %s parsed from the engine log", d.FromLog(), noun)))
	}
	return lines(out, h)
}

// originLacks reports whether the source reading an endpoint cannot give
// what the source named n gives (Origin.Missing begins with its name:
// "logs (Prometheus holds metrics only…)").
func originLacks(o *model.Origin, n string) bool {
	for _, m := range o.Missing {
		if strings.HasPrefix(m, n+" ") || m == n {
			return true
		}
	}
	return false
}
