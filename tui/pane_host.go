package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterPane(PaneSpec{ID: "host", Slot: 8, New: func() Pane { return &hostPane{} }})
}

// hostPane is the machine around the shown endpoint's engine
// (model.HostReading, from sources/host): host CPU, memory and swap, the
// engine's cgroup, /dev/shm and disks, then one row per engine process
// with its CPU, RSS, threads and busiest thread (the API server first),
// and what could not be read. It joins the grid only while there is a
// reading (an endpoint on this machine); the tab bar always has it.
type hostPane struct{ top int }

func (*hostPane) Title() string { return "Host" }
func (*hostPane) Keys() []key.Binding {
	return scrollKeys("scroll processes")
}

func (p *hostPane) Scroll(delta int) { p.top = max(0, p.top+delta) }

// hostOf is the shown endpoint's newest host reading (nil: none).
func hostOf(d *Data) *model.HostReading {
	if e := d.Endpoint(); e != nil {
		return e.Host
	}
	return nil
}

// DrawKey: drawn from the shown endpoint's newest reading only, which the
// core replaces whole (never changes in place) every 3 s (see Keyed).
func (*hostPane) DrawKey(d *Data) uint64 {
	if h := hostOf(d); h != d.hostSeen {
		d.hostSeen = h
		d.hostVersion++
	}
	return d.hostVersion
}

func (*hostPane) Height(d *Data, w int) int {
	h := hostOf(d)
	if h == nil {
		return 1
	}
	return len(HostLines(h, w))
}

// hostBusy is the share of a core a thread wants before its row is
// marked (diagnosis's api_server_cpu judges it with the GPU and the queue).
const hostBusy = 0.9

func (p *hostPane) View(d *Data, w, h int) string {
	s := d.Styles
	r := hostOf(d)
	if r == nil {
		return s.Faint.Render(clip("no host reading: the endpoint is not on this machine, its port's process is not visible, or --no-host", w))
	}
	all, head, group := hostLines(r, w)
	head++ // the column labels stay too
	var out []string
	for i, l := range all {
		switch {
		case i < head-1:
			out = append(out, hostStyleSummary(d, r, group[i], l))
		case i == head-1:
			out = append(out, s.Faint.Render(l))
		case i-head < len(r.Procs):
			pr := r.Procs[i-head]
			if want := pr.Busiest.Want.Or(pr.Busiest.CPU.Or(0)); want >= hostBusy {
				out = append(out, s.Warn.Render(l))
			} else {
				out = append(out, l)
			}
		default:
			out = append(out, s.Faint.Render(l))
		}
	}
	// Scroll the process rows, keeping the summary.
	if len(out) > h && h > head {
		p.top = min(p.top, len(out)-h)
		out = append(out[:head:head], out[head+p.top:]...)
	}
	return lines(out, h)
}

// hostStyleSummary colours the summary line that holds a shortage.
func hostStyleSummary(d *Data, r *model.HostReading, i int, l string) string {
	s := d.Styles
	short := false
	switch i {
	case 0:
		short = r.MemTotal.OK && r.MemAvailable.OK && r.MemAvailable.V < 0.05*r.MemTotal.V ||
			r.SwapOut.OK && r.SwapOut.V > 0
	case 1:
		short = r.CgroupOOMKills.OK && r.CgroupOOMKills.V > 0 ||
			r.CgroupMemLimit.OK && r.CgroupMemUsage.OK && r.CgroupMemUsage.V > 0.9*r.CgroupMemLimit.V
	}
	if short {
		return s.Warn.Render(l)
	}
	return l
}

// HostLines is a host reading in plain lines of at most w cells: host CPU,
// memory and swap; the cgroup; /dev/shm and disks (each group's parts
// packed into as few lines as fit); column labels; a row per engine
// process (the API server marked ▶); what could not be read and the
// container caveat. Every text from the machine is cleaned (model.Clean).
// The snapshot command prints the same lines.
func HostLines(r *model.HostReading, w int) []string {
	out, _, _ := hostLines(r, w)
	return out
}

// hostLines also says which lines are the summary: out[:labels] the
// summary, out[labels] the column labels, then the process rows; summary
// holds each summary line's group (0 host, 1 cgroup, 2 files).
func hostLines(r *model.HostReading, w int) (out []string, labels int, group []int) {
	cpu := "CPU " + fmtPct(r.CPUBusy)
	if r.CPUs > 0 {
		cpu += fmt.Sprintf(" of %d", r.CPUs)
	}
	swap := "swap in/out " + fmtNum(r.SwapIn) + "/" + fmtNum(r.SwapOut) + " pg/s"
	if r.SwapTotal.OK && r.SwapTotal.V == 0 {
		swap = "no swap"
	}
	// The cgroup, /dev/shm and threads are read through the engine's
	// process: with none read they are not checked, and one line says so
	// (a refused port printed "cgroup --" and "/dev/shm -- (free --)").
	noProc := len(r.Procs) == 0
	var cg, unread []string
	if r.Cgroup != "" || r.CgroupMemUsage.OK || !noProc {
		cg = append(cg, "cgroup "+nonEmptyStr(model.Clean(r.Cgroup), "--"))
	} else {
		unread = append(unread, "cgroup")
	}
	if r.CgroupMemUsage.OK {
		limit := "no limit"
		if r.CgroupMemLimit.OK {
			limit = "of " + fmtBytes(r.CgroupMemLimit)
		}
		cg = append(cg, "mem "+fmtBytes(r.CgroupMemUsage)+" "+limit, "OOM kills "+fmtNum(r.CgroupOOMKills))
	}
	var files []string
	if r.ShmTotal.OK || r.ShmFree.OK || !noProc {
		files = append(files, "/dev/shm "+fmtBytes(r.ShmTotal)+" (free "+fmtBytes(r.ShmFree)+")")
	} else {
		unread = append(unread, "/dev/shm")
	}
	for _, dk := range r.Disks {
		files = append(files, model.Clean(dk.What)+" disk "+fmtBytes(dk.Free)+" free of "+fmtBytes(dk.Total))
	}
	if r.Weights.OK {
		files = append(files, "model weights "+fmtBytes(r.Weights)+" on disk")
	}
	for g, parts := range [][]string{{cpu, "mem avail " + fmtBytes(r.MemAvailable) + " of " + fmtBytes(r.MemTotal), swap}, cg, files} {
		for _, l := range pack(parts, " · ", w) {
			out = append(out, l)
			group = append(group, g)
		}
	}
	labels = len(out)
	if noProc {
		// the labels' line: nothing to label
		out = append(out, strings.Join(append(unread, "threads"), ", ")+": not checked, because no engine process was read")
	} else {
		out = append(out, fmt.Sprintf("%-8s %5s %7s %4s  %s", "PID", "cores", "RSS", "thr", "busiest thread"))
	}
	for _, p := range r.Procs {
		mark := " "
		if p.Front {
			mark = "▶"
		}
		t := p.Busiest
		busiest := "--"
		if t.TID > 0 {
			want := t.Want
			if !want.OK {
				want = t.CPU
			}
			busiest = model.Clean(t.Name) + " " + fmtPct(want)
		}
		cores := missing
		if p.CPU.OK {
			cores = fmt.Sprintf("%.2f", p.CPU.V) // one precision down the column: 0 beside 0.00 read as two kinds of nothing
		}
		row := fmt.Sprintf("%s%-7d %5s %7s %4d  %s", mark, p.PID, cores, fmtBytes(p.RSS), p.Threads, busiest)
		if name := model.Clean(p.Name); name != "" {
			row += "  (" + name + ")"
		}
		out = append(out, row)
	}
	for _, n := range r.NotChecked {
		out = append(out, wrapLine(model.Clean(n), w)...)
	}
	if r.Note != "" {
		out = append(out, wrapLine(model.Clean(r.Note), w)...)
	}
	for i := range out {
		out[i] = clip(out[i], w)
	}
	return out, labels, group
}

// pack joins parts with sep into as few lines of at most w cells as fit
// (a part longer than w has a line of its own, clipped).
func pack(parts []string, sep string, w int) []string {
	var out []string
	cur := ""
	for _, p := range parts {
		switch {
		case cur == "":
			cur = p
		case len([]rune(cur))+len([]rune(sep))+len([]rune(p)) <= w:
			cur += sep + p
		default:
			out = append(out, cur)
			cur = p
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}
