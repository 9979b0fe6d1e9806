package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/llmtop/llmtop/model"
)

// renderHeader is the top bar: health badge, engine, model, context,
// uptime, interval and window; a second line names the endpoint(s) and,
// when the newest scrape failed, why and what to do.
func renderHeader(d *Data, w int) []string {
	s := d.Styles
	e := d.Endpoint()
	badge, lvl := d.Health(e)
	var b strings.Builder
	b.WriteString(s.Title.Render("llmtop") + " ")
	b.WriteString(s.Badge(lvl).Render(" " + badge + " "))
	if d.Simulated || (e != nil && e.Identity.Simulated) {
		sim := " SIMULATED "
		if sc := d.Scenario; sc.Name != "" {
			sim += "· " + sc.Name + " " + clock(sc.Elapsed)
			if sc.Length > 0 {
				sim += "/" + clock(sc.Length)
			}
			sim += " "
		}
		b.WriteString(" " + s.BadgeInfo.Render(sim))
	}
	if d.Replay != nil {
		b.WriteString(" " + s.BadgeInfo.Render(replayBadge(d.Replay)))
	}
	if d.Paused {
		b.WriteString(" " + s.BadgeWarn.Render(" PAUSED "))
	}
	if d.Recording != "" {
		if d.Sources["record"] != "" { // the recorder reported a write error
			b.WriteString(" " + s.BadgeWarn.Render(" REC FAILED "))
		} else {
			b.WriteString(" " + s.BadgeInfo.Render(" REC "))
		}
	}
	parts := []string{}
	if e != nil && e.Identity.Engine != "" {
		eng := string(e.Identity.Engine)
		if e.Identity.Version != "" {
			eng += " " + e.Identity.Version
		}
		parts = append(parts, eng)
	} else {
		parts = append(parts, "engine "+missing)
	}
	k, _ := d.Key()
	mi := modelInfo(e, k.Model)
	name := k.Model
	if name == "" && mi != nil {
		name = mi.ID
	}
	if name == "" {
		name = missing
	}
	if mi != nil && mi.NotLoaded() {
		// Ollama lists what it could load (/api/tags) beside what it has
		// loaded (/api/ps): an unloaded model's next request pays the load.
		name += " (not loaded)"
	}
	parts = append(parts, "model "+name)
	ctx := missing
	if mi != nil && mi.MaxContext > 0 {
		ctx = fmt.Sprint(mi.MaxContext)
	}
	more := []string{"ctx " + ctx, "up " + uptime(d)}
	dot := s.Faint.Render(" · ")
	first := b.String() + "  " + strings.Join(parts, dot)
	second := s.Faint.Render("every "+fmtDur(d.Interval)+" · window "+fmtDur(d.Window)+" · ") + endpointLine(d, e)
	if d.Recording != "" || d.Prometheus != "" {
		// where the numbers come from and go: before the endpoint list,
		// which is the part a narrow screen cuts
		var via []string
		if d.Prometheus != "" {
			via = append(via, "via Prometheus "+model.Clean(d.Prometheus))
		}
		if d.Recording != "" {
			via = append(via, "recording to "+model.Clean(filepath.Base(d.Recording)))
		}
		second = s.Faint.Render("every "+fmtDur(d.Interval)+" · window "+fmtDur(d.Window)+" · "+strings.Join(via, " · ")+" · ") + endpointLine(d, e)
	}
	if full := first + dot + strings.Join(more, dot); lipgloss.Width(full) <= w {
		first = full
	} else { // narrow: context and uptime lead the second line
		second = s.Faint.Render(strings.Join(more, " · ")+" · ") + second
	}
	return []string{fit(first, w), fit(second, w)}
}

func modelInfo(e *EndpointInfo, name string) *model.ModelInfo {
	if e == nil {
		return nil
	}
	for i := range e.Identity.Models {
		if e.Identity.Models[i].ID == name || name == "" {
			return &e.Identity.Models[i]
		}
	}
	return nil
}

// uptime is the time since the engine process started (when it says) or
// since the last restart llmtop saw; "--" when neither is known or the
// newest scrape failed (a dead process has no uptime), "down 12s" while
// the endpoint refuses connections.
func uptime(d *Data) string {
	if e := d.Endpoint(); e != nil && e.Err != "" {
		if lvl, _ := d.Health(e); lvl == "DOWN" && !e.LastOK.IsZero() && d.Clock().After(e.LastOK) {
			return "--, down " + fmtDur(d.Clock().Sub(e.LastOK).Truncate(time.Second))
		}
		return missing
	}
	st := d.State()
	start := st.Started
	if e := d.Endpoint(); start.IsZero() && e != nil {
		// the engine's metrics do not say (llama-server): /proc's start
		// of the process holding its port, on this machine
		start = e.ProcessStarted
	}
	if n := len(st.Restarts); n > 0 && st.Restarts[n-1].After(start) {
		start = st.Restarts[n-1]
	}
	if start.IsZero() || start.After(d.Clock()) {
		return missing
	}
	up := d.Clock().Sub(start)
	if up >= time.Minute {
		// minutes are enough past the first one, and a header that does
		// not change every second spares the terminal a redraw per tick
		up = up.Truncate(time.Minute)
	}
	return fmtDur(up)
}

// maxAlso is how many other endpoints the header names.
const maxAlso = 8

func endpointLine(d *Data, e *EndpointInfo) string {
	s := d.Styles
	if len(d.Endpoints()) == 0 {
		return s.Faint.Render("no endpoint")
	}
	var b strings.Builder
	url := d.SelectedURL()
	if e != nil && e.Origin != nil && e.Name() != url {
		// a replica read through Prometheus: its name first, as the fleet
		// and the findings call it
		b.WriteString(s.Accent.Render(model.Clean(e.Name())) + " ")
	}
	b.WriteString(s.Accent.Render(url))
	if c := d.Choices(); len(c) > 1 {
		b.WriteString(s.Faint.Render(fmt.Sprintf("  [%d/%d %s/%s]", d.selected()+1, len(c), d.Keys.PrevEndpoint.Keys()[0], d.Keys.NextEndpoint.Help().Key)))
	}
	if len(d.Endpoints()) > 1 {
		others := []string{}
		n := len(d.Endpoints())
		if e != nil {
			n-- // the one on screen
		}
		for _, u := range d.Endpoints() {
			if u == url {
				continue
			}
			if len(others) == maxAlso {
				// a fleet of hundreds would be measured and cut on every frame
				others = append(others, fmt.Sprintf("+%d more (f: fleet)", n-maxAlso))
				break
			}
			badge, lvl := d.Health(d.Info(u))
			others = append(others, u+" "+s.Level(lvl).Render(badge))
		}
		b.WriteString(s.Faint.Render("  also: ") + strings.Join(others, ", "))
	}
	switch {
	case e == nil || e.Scrapes == 0:
		b.WriteString(s.Faint.Render("  waiting for the first scrape…"))
	case e.Down() && e.LifeDetail != "" && (e.Life == model.LifeStarting || e.Life == model.LifeStopped || e.Life == model.LifeCrashed):
		// Why nothing answers, as the log said it: a start under way, a
		// clean shutdown, a crash.
		lvl := LevelWarn
		if e.Life == model.LifeCrashed {
			lvl = LevelCrit
		}
		b.WriteString("  " + s.Level(lvl).Render(string(e.Life)+" "+fmtDur(d.Clock().Sub(e.LifeSince))+": "+e.LifeDetail))
	case e.Err != "":
		b.WriteString("  " + s.Crit.Render("✗ "+e.Err))
		if e.Hint != "" {
			b.WriteString(s.Faint.Render(" — " + e.Hint))
		}
	case d.Stale(e):
		b.WriteString("  " + s.Warn.Render("no scrape for "+fmtDur(d.Clock().Sub(e.Last))))
	case e.Identity.HealthDetail != "":
		b.WriteString(s.Faint.Render("  " + e.Identity.HealthDetail))
	}
	return b.String()
}

// clock writes a span as m:ss ("0:40", "1:30").
func clock(d time.Duration) string {
	d = max(0, d.Round(time.Second))
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
