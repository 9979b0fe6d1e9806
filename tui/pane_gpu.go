package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterPane(PaneSpec{ID: "gpu", Slot: 4, New: func() Pane { return &gpuPane{} }})
}

// gpuPane: one compact row per GPU from the newest model.GPUSnapshot, and
// how much of its memory the engine holds versus other processes.
type gpuPane struct{ top int }

func (*gpuPane) Title() string { return "GPU" }
func (*gpuPane) Keys() []key.Binding {
	return []key.Binding{key.NewBinding(key.WithKeys("j", "k"), key.WithHelp("j/k", "scroll GPUs (focused)"))}
}

func (p *gpuPane) Scroll(delta int) { p.top = max(0, p.top+delta) }

func (*gpuPane) Height(d *Data, w int) int {
	if d.GPU == nil || d.GPU.Err != "" {
		return 1
	}
	// one row each; the second (detail) line per GPU only in space left over
	return len(d.GPU.GPUs) + 1
}

func (p *gpuPane) View(d *Data, w, h int) string {
	s := d.Styles
	g := d.GPU
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
	out := []string{s.Faint.Render(strings.Join(head, " · "))}
	rows := h - 1
	if g.Note != "" && rows > len(g.GPUs) {
		rows--
	}
	st := d.State()
	p.top = max(0, min(p.top, len(g.GPUs)-rows))
	shown := len(g.GPUs) - p.top
	more := shown > rows
	if more {
		shown = max(0, rows-1)
	}
	// With room for two lines per GPU, a faint second line says who holds
	// the memory and how the clocks stand.
	detail := !more && rows >= 2*len(g.GPUs)
	for i := p.top; i < p.top+shown; i++ {
		out = append(out, gpuRow(s, d.Thresholds, g.GPUs[i], w, st.Waiting))
		if detail {
			out = append(out, s.Faint.Render("  "+gpuDetail(g.GPUs[i])))
		}
	}
	if more {
		out = append(out, s.Faint.Render(fmt.Sprintf("… %d more (focus and j/k, or zoom 4)", len(g.GPUs)-p.top-shown)))
	}
	if g.Note != "" && len(out) < h {
		out = append(out, s.Faint.Render(g.Note))
	}
	return lines(out, h)
}

func gpuAbsent(d *Data) string {
	err, ok := d.Sources["gpu"]
	switch {
	case ok && err != "":
		return "GPU source not running: " + err
	case !ok && len(d.Sources) > 0:
		return "no GPU source in this build"
	case d.Now.Sub(d.Started) > 3*d.Interval:
		return "no GPU reading: the GPU source sent nothing (--no-gpu turns it off)"
	default:
		return "waiting for the first GPU reading…"
	}
}

// gpuRow is one GPU in w cells: index, name, util and memory (with bars
// from 100 cells), power, temperature, engine vs other memory, throttle
// reasons. Narrower rows shorten the name and drop the bars.
func gpuRow(s *Styles, t Thresholds, g model.GPU, w int, waiting model.Opt) string {
	name := strings.TrimPrefix(strings.TrimPrefix(g.Name, "NVIDIA "), "Tesla ")
	if g.Lost {
		return s.Crit.Render(fmt.Sprintf("%d %s: GPU lost (fell off the bus) %s", g.Index, name, g.Err))
	}
	wide := w >= 100
	nameW := 14
	if !wide {
		nameW = 9
		if f := strings.Fields(name); len(f) > 0 && w < 80 {
			name, nameW = f[0], 5
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s ", g.Index, fit(clip(name, nameW), nameW))
	util := g.Util.Scale(0.01)
	ut := s.Judged(t, MGPUUtil, g.Util, waiting.Or(0))
	memFrac := model.None
	if g.MemUsed.OK && g.MemTotal.OK && g.MemTotal.V > 0 {
		memFrac = model.Some(g.MemUsed.V / g.MemTotal.V)
	}
	mt := s.Judged(t, MGPUMem, memFrac)
	mem := memPair(g.MemUsed, g.MemTotal)
	if wide {
		b.WriteString("util " + ut.Render(bar(util.Or(0), 8)+fmt.Sprintf(" %4s", fmtPct(util))))
		b.WriteString("  mem " + mt.Render(bar(memFrac.Or(0), 8)+" "+fmt.Sprintf("%-11s", mem)))
	} else {
		b.WriteString("util " + ut.Render(fmt.Sprintf("%4s", fmtPct(util))))
		b.WriteString(" mem " + mt.Render(fmt.Sprintf("%-11s", mem)))
	}
	pw := fmtNum(g.Power)
	if g.PowerLimit.OK && w >= 70 {
		pw += "/" + fmtNum(g.PowerLimit)
	}
	b.WriteString(" " + fmt.Sprintf("%8s", pw+"W"))
	temp := missing
	if g.Temp.OK {
		temp = fmt.Sprintf("%.0f°C", g.Temp.V)
	}
	b.WriteString(" " + s.Judged(t, MGPUTemp, g.Temp).Render(fmt.Sprintf("%5s", temp)))
	if len(g.Throttle) > 0 {
		b.WriteString(" " + s.Warn.Render(strings.Join(g.Throttle, ",")))
	}
	if g.Err != "" {
		b.WriteString(" " + s.Warn.Render(g.Err))
	}
	return b.String()
}

// gpuDetail is a GPU's second line: engine vs other memory, clocks, ECC.
func gpuDetail(g model.GPU) string {
	var parts []string
	if eng, other, ok := memSplit(g); ok {
		parts = append(parts, "engine "+fmtBytes(eng)+" · other "+fmtBytes(other))
	} else {
		parts = append(parts, "processes "+missing)
	}
	if g.SMClock.OK {
		c := "SM " + fmtNum(g.SMClock)
		if g.SMClockMax.OK {
			c += "/" + fmtNum(g.SMClockMax)
		}
		parts = append(parts, c+" MHz")
	}
	if g.ECCVolatile.OK && g.ECCVolatile.V > 0 {
		parts = append(parts, "ECC errors "+fmtNum(g.ECCVolatile))
	}
	return strings.Join(parts, " · ")
}

// memPair is "71.5/80.0Gi" (both in the total's unit when they share it).
func memPair(used, total model.Opt) string {
	u, t := fmtBytes(used), fmtBytes(total)
	if len(u) > 2 && len(t) > 2 && u[len(u)-2:] == t[len(t)-2:] {
		return u[:len(u)-2] + "/" + t
	}
	return u + "/" + t
}

// memSplit sums process memory held by the engine versus anyone else.
func memSplit(g model.GPU) (engine, other model.Opt, ok bool) {
	if len(g.Processes) == 0 {
		return model.None, model.None, false
	}
	var e, o float64
	for _, p := range g.Processes {
		if !p.UsedMem.OK {
			continue
		}
		if p.Engine != "" {
			e += p.UsedMem.V
		} else {
			o += p.UsedMem.V
		}
	}
	return model.Some(e), model.Some(o), true
}

// DrawKey: drawn from the GPU snapshot only (see Keyed).
func (*gpuPane) DrawKey(d *Data) uint64 { return d.GPUVersion }
