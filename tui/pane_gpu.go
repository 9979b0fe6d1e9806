package tui

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterPane(PaneSpec{ID: "gpu", Slot: 4, New: func() Pane { return &gpuPane{} }})
}

// gpuPane: one compact row per GPU from the newest model.GPUSnapshot (util,
// memory, power and temperature, each a small bar and its value, under one
// line of column labels), and in space left over a faint second line per
// GPU with who holds the memory, the clocks and the throttle reasons.
type gpuPane struct{ top int }

func (*gpuPane) Title() string { return "GPU" }
func (*gpuPane) Keys() []key.Binding {
	return scrollKeys("scroll GPUs")
}

func (p *gpuPane) Scroll(delta int) { p.top = max(0, p.top+delta) }

// detailGPUs is how many GPUs the pane asks room for two lines each (and
// for up to detailProcs of the processes holding their memory).
const (
	detailGPUs  = 4
	detailProcs = 4
)

func (*gpuPane) Height(d *Data, w int) int {
	if d.GPU() == nil || d.GPU().Err != "" || len(d.GPU().GPUs) == 0 {
		return 1
	}
	// summary, column labels, one row each and the note; with up to
	// detailGPUs GPUs a second line each says who holds the memory and how
	// the clocks stand (the processes holding VRAM are what a user comes to
	// this pane for); with more, that line shows only where the column has
	// room to spare or the pane is zoomed
	n := len(d.GPU().GPUs)
	if n <= detailGPUs {
		n *= 2
		if k := len(gpuProcs(d.GPU().GPUs)); k > 0 {
			n += 1 + min(k, detailProcs)
		}
	}
	return 2 + n + len(noteLines(d.GPU().Note, w))
}

func (p *gpuPane) View(d *Data, w, h int) string {
	s := d.Styles
	if e := d.Endpoint(); e != nil && e.Origin != nil {
		// A replica read through Prometheus runs on another node: this
		// machine's GPUs (or its lack of them) are not the replica's.
		msg := fmt.Sprintf("no GPU data for %s (read via %s) · this machine's GPUs are not its own, and that source gives none for it",
			model.Clean(e.Name()), nonEmptyStr(e.Origin.Source, "another source"))
		var out []string
		for _, l := range wrapLine(msg, w) {
			out = append(out, s.Faint.Render(l))
		}
		return lines(out, h)
	}
	g := d.GPU()
	if g == nil {
		return s.Faint.Render(gpuAbsent(d))
	}
	if g.Err != "" {
		return s.Warn.Render(g.Err)
	}
	if len(g.GPUs) == 0 {
		return s.Faint.Render("no GPU visible to the driver")
	}
	head := []string{fmt.Sprintf("%d GPU", len(g.GPUs))}
	if len(g.GPUs) > 1 {
		head[0] += "s"
	}
	if g.Driver != "" {
		head = append(head, "driver "+g.Driver)
	}
	if g.CUDA != "" {
		head = append(head, "CUDA "+g.CUDA)
	}
	if g.Simulated {
		head = append(head, "simulated")
	}
	summary := strings.Join(head, " · ")
	if h <= 1 {
		// no line of its own for the note: it rides on the summary
		if g.Note != "" {
			summary += " · note: " + g.Note
		}
		return s.Faint.Render(summary)
	}
	n := len(g.GPUs)
	// The note (e.g. how to see processes in another PID namespace) always
	// keeps a line: in full when it fits under the rows, else shortened.
	notes := noteLines(g.Note, w)
	noteN := min(len(notes), 1)
	avail := h - 1
	labels := 0
	if avail-noteN >= 2 {
		labels = 1
	}
	if room := avail - labels - n; room > noteN {
		noteN = min(len(notes), room)
	}
	rows := max(0, avail-labels-noteN)

	st := d.State()
	p.top = max(0, min(p.top, n-rows))
	shown := min(n-p.top, rows)
	// "… N more" takes the last row, when there is one to take
	more := n-p.top > rows && rows > 0
	if more {
		shown = rows - 1
	}
	// With room for two lines per GPU, a faint second line says who holds
	// the memory, how the clocks stand and why they are held back.
	detail := !more && rows >= 2*n
	vis := g.GPUs[p.top : p.top+shown]
	c := layoutGPU(d.Thresholds, vis, w, detail)
	c.engine, c.idle = engineIdle(g, st.Waiting, d.Core.Config())

	out := []string{s.Faint.Render(summary)}
	if labels > 0 {
		out = append(out, s.Faint.Render(c.labels()))
	}
	for _, x := range vis {
		out = append(out, c.row(s, x, st.Waiting, detail))
		if detail {
			out = append(out, gpuDetail(s, x))
		}
	}
	if more {
		k := d.Keys
		out = append(out, s.Faint.Render(fmt.Sprintf("… %d more (focus and %s/%s, or zoom)", n-p.top-shown, k.Down.Keys()[0], k.Up.Keys()[0])))
	}
	if room := h - len(out) - noteN; detail && room >= 2 {
		out = append(out, procLines(s, gpuProcs(g.GPUs), room, w)...)
	}
	out = append(out, shortNote(g.Note, notes, noteN, w, s)...)
	return lines(out, h)
}

// noteLines is the note wrapped to w cells (none without a note).
func noteLines(note string, w int) []string {
	if note == "" || w <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(note, w, " "), "\n")
}

// shortNote is the note in k lines: whole when they are enough, else its
// first lines with an ellipsis, and on one line a pointer to the zoomed
// pane, where it has room.
func shortNote(note string, wrapped []string, k, w int, s *Styles) []string {
	if k <= 0 {
		return nil
	}
	ls := wrapped
	switch {
	case len(wrapped) <= k:
	case k == 1:
		const more = " (zoom 4)"
		ls = []string{clip(note, max(1, w-len(more))) + more}
	default:
		ls = append([]string(nil), wrapped[:k]...)
		ls[k-1] = clip(ls[k-1]+" …", w)
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = s.Faint.Render(l)
	}
	return out
}

func gpuAbsent(d *Data) string {
	err, ok := d.Sources["gpu"]
	switch {
	case ok && err != "":
		return "GPU source not running: " + err
	case !ok && len(d.Sources) > 0:
		return "no GPU source in this build"
	case d.olderThan(d.Started, 3*d.Interval):
		return "no GPU reading: the GPU source sent nothing (--no-gpu turns it off)"
	default:
		return "waiting for the first GPU reading…"
	}
}

// gpuDetail is a GPU's second line: engine vs other memory, clocks, ECC,
// then the throttle reasons and read errors (or, for a lost GPU, what to
// do about it).
func gpuDetail(s *Styles, g model.GPU) string {
	if g.Lost {
		if _, advice := lostReason(g.Err); advice != "" {
			return s.Crit.Render("  " + advice)
		}
		return ""
	}
	var parts []string
	switch eng, other, unknown, ok := memSplit(g); {
	case ok && !eng.OK && !other.OK:
		parts = append(parts, "processes in another PID namespace hold "+fmtBytes(unknown))
	case ok:
		p := "engine " + fmtBytes(eng) + " · other " + fmtBytes(other)
		switch {
		case slices.ContainsFunc(g.Processes, func(p model.GPUProcess) bool { return p.Engine != "" }):
		case unknown.OK:
			// one in another PID namespace may be an engine: unknown
			p = "no engine among the processes seen · other " + fmtBytes(other)
		default:
			// "engine 0B" read as an engine holding nothing: none is
			// here (the sim runs on the CPU; the engine is on another GPU)
			p = "no engine process on this GPU · other " + fmtBytes(other)
		}
		if unknown.OK {
			p += " · another PID namespace " + fmtBytes(unknown)
		}
		parts = append(parts, p)
	case g.Processes != nil:
		parts = append(parts, "no processes")
	case g.IsUnsupported(model.GPUFieldProcesses):
		parts = append(parts, "processes "+notSupported)
	default:
		parts = append(parts, "processes "+missing)
	}
	switch {
	case g.SMClock.OK:
		c := "SM " + fmtNum(g.SMClock)
		if g.SMClockMax.OK {
			c += "/" + fmtNum(g.SMClockMax)
		}
		parts = append(parts, c+" MHz")
	case g.IsUnsupported(model.GPUFieldSMClock):
		parts = append(parts, "SM clock "+notSupported)
	}
	if g.Power.OK && g.IsUnsupported(model.GPUFieldPowerLimit) {
		// the row shows the draw alone, without a bar
		parts = append(parts, "power limit "+notSupported)
	}
	if g.ECCVolatile.OK && g.ECCVolatile.V > 0 {
		parts = append(parts, "ECC errors "+fmtNum(g.ECCVolatile))
	}
	// The links only when short of what they can do (pcie_link and
	// nvlink_down judge them; an idle link trains down by design).
	if g.PCIeGen.OK && g.PCIeGenMax.OK && g.PCIeWidth.OK && g.PCIeWidthMax.OK &&
		(g.PCIeGen.V < g.PCIeGenMax.V || g.PCIeWidth.V < g.PCIeWidthMax.V) {
		parts = append(parts, fmt.Sprintf("PCIe Gen%s x%s of Gen%s x%s", fmtNum(g.PCIeGen), fmtNum(g.PCIeWidth), fmtNum(g.PCIeGenMax), fmtNum(g.PCIeWidthMax)))
	}
	if g.NVLinks.OK && g.NVLinksMax.OK && g.NVLinks.V < g.NVLinksMax.V {
		parts = append(parts, "NVLink "+fmtNum(g.NVLinks)+"/"+fmtNum(g.NVLinksMax)+" up")
	}
	if g.NVLinkTx.OK && g.NVLinkRx.OK {
		parts = append(parts, "NVLink tx/rx "+fmtBytes(g.NVLinkTx)+"/"+fmtBytes(g.NVLinkRx)+"/s")
	}
	out := s.Faint.Render("  " + strings.Join(parts, " · "))
	if tl := gpuTail(g); tl != "" {
		out += s.Faint.Render(" · ") + s.Warn.Render(tl)
	}
	return out
}

// gpuProc is one process holding memory on one GPU.
type gpuProc struct {
	gpu int
	p   model.GPUProcess
}

// gpuProcs lists every GPU's processes, the most memory first (those
// whose memory NVML does not say last), then by GPU and PID.
func gpuProcs(gs []model.GPU) []gpuProc {
	var out []gpuProc
	for _, g := range gs {
		for _, p := range g.Processes {
			out = append(out, gpuProc{g.Index, p})
		}
	}
	slices.SortStableFunc(out, func(a, b gpuProc) int {
		am, bm := a.p.UsedMem, b.p.UsedMem
		switch {
		case am.OK != bm.OK:
			if am.OK {
				return -1
			}
			return 1
		case am.OK && am.V != bm.V:
			if am.V > bm.V {
				return -1
			}
			return 1
		case a.gpu != b.gpu:
			return a.gpu - b.gpu
		}
		return a.p.PID - b.p.PID
	})
	return out
}

// procLines is the processes holding GPU memory in at most room lines
// (a header, one line each, and "… N more" when they do not all fit), as
// nvidia-smi's process table has them: GPU, PID, memory, name.
func procLines(s *Styles, ps []gpuProc, room, w int) []string {
	if len(ps) == 0 || room < 2 {
		return nil
	}
	out := []string{s.Faint.Render(clip("  GPU      PID      VRAM  process", w))}
	shown := min(len(ps), room-1)
	if shown < len(ps) {
		shown--
	}
	for _, x := range ps[:shown] {
		name := x.p.Name
		switch {
		case x.p.Foreign:
			name = "(another PID namespace: run llmtop there, or docker --pid=host)"
		case name == "":
			name = "(name unknown)"
		}
		if x.p.Engine != "" {
			name += " · " + x.p.Engine
		}
		line := fmt.Sprintf("  %3d %8d %9s  %s", x.gpu, x.p.PID, fmtBytes(x.p.UsedMem), name)
		out = append(out, clip(line, w))
	}
	if shown < len(ps) {
		out = append(out, s.Faint.Render(clip(fmt.Sprintf("  … %d more processes (zoom 4)", len(ps)-shown), w)))
	}
	return out
}

// memPair is "71.5/80.0Gi" (both in the total's unit when they share it).
func memPair(used, total model.Opt) string {
	u, t := fmtBytes(used), fmtBytes(total)
	if len(u) > 2 && len(t) > 2 && u[len(u)-2:] == t[len(t)-2:] {
		return u[:len(u)-2] + "/" + t
	}
	return u + "/" + t
}

// memShort is used/total in the total's unit, whole numbers from 10 up:
// "72/80Gi", "0.5/24Gi", "512/768Mi" (the bar carries the fraction).
func memShort(used, total model.Opt) string {
	if !total.OK || total.V <= 0 {
		return fmtBytes(used) + "/" + missing
	}
	units := []string{"B", "Ki", "Mi", "Gi", "Ti"}
	div, i := 1.0, 0
	for total.V/div >= 1024 && i < len(units)-1 {
		div *= 1024
		i++
	}
	num := func(x float64) string {
		if x >= 10 || x == math.Trunc(x) {
			return fmt.Sprintf("%.0f", x)
		}
		return fmt.Sprintf("%.1f", x)
	}
	u := missing
	if used.OK {
		u = num(used.V / div)
	}
	return u + "/" + num(total.V/div) + units[i]
}

// memSplit sums process memory held by the engine, by other processes,
// and by processes in another PID namespace, which could be either; the
// first two are absent when every process is foreign, the last when none is.
func memSplit(g model.GPU) (engine, other, unknown model.Opt, ok bool) {
	if len(g.Processes) == 0 {
		return model.None, model.None, model.None, false
	}
	var e, o, u float64
	known, foreign := false, false
	for _, p := range g.Processes {
		known = known || !p.Foreign
		foreign = foreign || p.Foreign
		if !p.UsedMem.OK {
			continue
		}
		switch {
		case p.Foreign:
			u += p.UsedMem.V
		case p.Engine != "":
			e += p.UsedMem.V
		default:
			o += p.UsedMem.V
		}
	}
	engine, other, unknown = optOf(e, known), optOf(o, known), optOf(u, foreign)
	return engine, other, unknown, true
}

// DrawKey: drawn from the GPU snapshot only (see Keyed).
func (*gpuPane) DrawKey(d *Data) uint64 { return d.GPUVersion }
