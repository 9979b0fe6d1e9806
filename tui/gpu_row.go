package tui

// The GPU pane's rows: one line per GPU with its util, memory, power and
// temperature, each a bar and a value, laid out once per width so the
// columns line up (pane_gpu.go draws the pane around them).

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// gpu columns, in the order they are drawn
const (
	colUtil = iota
	colMem
	colPower
	colTemp
	nCols
)

var colLabels = [nCols]string{"util", "mem", "power", "temp"}

// Bars are at most maxBar cells and drawn only when at least minBar fit.
const (
	minBar = 3
	maxBar = 10
)

// gpuCols is how the rows are laid out at one width, the same for every
// row so that the columns line up. Values come first; the bars take the
// room left, and go before any value does. Narrower still, the power limit
// goes (its bar, when drawn, still says how near the limit the draw is).
type gpuCols struct {
	t Thresholds
	// engine are the engine's GPUs (diagnosis.EngineGPUs) and idle says
	// gpu_idle_waiting's condition holds (their mean utilisation under
	// its threshold while requests wait): only then is a low utilisation
	// drawn as a warning, on the engine's GPUs.
	engine map[int]bool
	idle   bool
	idxW   int
	nameW  int
	long   bool // full names ("H100 80GB HBM3") rather than the first word
	barW   int  // 0: no bars
	limits bool // power as draw/limit
	valW   [nCols]int
}

// wideGPU is the pane width from which bars give up cells for full names.
const wideGPU = 100

// layoutGPU fits the rows of gs in w cells. Without detail lines the
// throttle reasons and read errors follow each row, and are given room.
func layoutGPU(t Thresholds, gs []model.GPU, w int, detail bool) gpuCols {
	c := gpuCols{t: t, idxW: 1}
	tailW, shortW, longW := 0, 1, 1
	for _, g := range gs {
		c.idxW = max(c.idxW, len(fmt.Sprint(g.Index)))
		shortW = max(shortW, ansi.StringWidth(gpuName(g, false)))
		longW = max(longW, ansi.StringWidth(gpuName(g, true)))
		if !detail && !g.Lost {
			if tl := gpuTail(g); tl != "" {
				tailW = max(tailW, 1+ansi.StringWidth(tl))
			}
		}
	}
	c.nameW = min(shortW, 9)
	var valW [2][nCols]int // without and with the power limits
	for i, limits := range []bool{false, true} {
		c.limits = limits
		c.values(gs)
		valW[i] = c.valW
	}
	fits := func(bw int, limits bool) bool {
		c.barW, c.limits, c.valW = bw, limits, valW[0]
		if limits {
			c.valW = valW[1]
		}
		return c.width()+tailW <= w
	}
	chosen := false
	for _, limits := range []bool{true, false} {
		for bw := maxBar; bw >= minBar && !chosen; bw-- {
			chosen = fits(bw, limits)
		}
		if chosen {
			break
		}
	}
	if !chosen && !fits(0, true) {
		fits(0, false)
	}
	// Room to spare goes to the full names (with a cluster exporter's
	// host and pod), up to a quarter of the width: whole where they fit,
	// the bars of a wide pane giving up cells for them down to half their
	// widest.
	if lw := min(longW, max(16, w/4)); lw > c.nameW {
		bw := c.barW
		for w >= wideGPU && c.barW > max(minBar, maxBar/2) && c.width()+tailW+lw-c.nameW > w {
			c.barW--
		}
		if c.width()+tailW+lw-c.nameW <= w {
			c.nameW, c.long = lw, true
		} else {
			c.barW = bw
		}
	}
	return c
}

// values fixes the value widths of the rows for the chosen power format.
func (c *gpuCols) values(gs []model.GPU) {
	c.valW = [nCols]int{}
	for _, g := range gs {
		for i := range nCols {
			c.valW[i] = max(c.valW[i], ansi.StringWidth(c.value(g, i)))
		}
	}
}

// cellW is column i's width: bar and value, or its label when wider.
func (c *gpuCols) cellW(i int) int {
	w := c.valW[i]
	if c.barW > 0 {
		w += c.barW + 1
	}
	return max(w, len(colLabels[i]))
}

func (c *gpuCols) width() int {
	w := c.idxW + 1 + c.nameW
	for i := range nCols {
		w += 1 + c.cellW(i)
	}
	return w
}

// labels is the line over the rows naming the columns.
func (c *gpuCols) labels() string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", c.idxW+1+c.nameW))
	for i := range nCols {
		b.WriteString(" " + fit(colLabels[i], c.cellW(i)))
	}
	return strings.TrimRight(b.String(), " ")
}

// gpuName is the name without the vendor: its first word ("H100"), or all
// of it ("H100 80GB HBM3"); a DCGM exporter's GPU adds its host ("H100@n1")
// and, in the long form, its pod ("H100 80GB HBM3@n1 llm/vllm-0").
func gpuName(g model.GPU, long bool) string {
	name := strings.TrimPrefix(strings.TrimPrefix(g.Name, "NVIDIA "), "Tesla ")
	if f := strings.Fields(name); !long && len(f) > 0 {
		name = f[0]
	}
	if name == "" {
		name = "GPU"
	}
	if o := g.Owner; o != nil {
		// A cluster exporter's GPUs: which host, and in the long form
		// which workload.
		if o.Host != "" {
			name += "@" + o.Host
		}
		if long && o.Pod != "" {
			name += " " + strings.Trim(o.Namespace+"/"+o.Pod, "/")
		}
	}
	return name
}

// field renders one value: n/a when the device does not support it, the
// formatted value, or missing.
func field(g model.GPU, name string, v model.Opt, f func(model.Opt) string) string {
	if !v.OK && g.IsUnsupported(name) {
		return notSupported
	}
	return f(v)
}

// value is column i's text for g.
func (c *gpuCols) value(g model.GPU, i int) string {
	switch i {
	case colUtil:
		return field(g, model.GPUFieldUtil, g.Util.Scale(0.01), fmtPct)
	case colMem:
		if g.IsUnsupported(model.GPUFieldMemUsed) && g.IsUnsupported(model.GPUFieldMemTotal) {
			return notSupported
		}
		return memShort(g.MemUsed, g.MemTotal)
	case colPower:
		pw := field(g, model.GPUFieldPower, g.Power, watts)
		if pw == notSupported {
			return pw
		}
		if c.limits && g.PowerLimit.OK {
			pw += "/" + watts(g.PowerLimit)
		}
		return pw + "W"
	case colTemp:
		return field(g, model.GPUFieldTemp, g.Temp, func(v model.Opt) string {
			if !v.OK {
				return missing
			}
			return fmt.Sprintf("%.0f°C", v.V)
		})
	}
	return ""
}

func watts(v model.Opt) string {
	if !v.OK {
		return missing
	}
	return fmt.Sprintf("%.0f", v.V)
}

// fraction is how full column i's bar is for g, and whether it has one:
// utilisation of 100 %, memory of the total, power of the limit,
// temperature of the slowdown threshold (of the critical temperature in
// the thresholds when the device does not say).
func (c *gpuCols) fraction(g model.GPU, i int) (float64, bool) {
	ratio := func(v, of model.Opt) (float64, bool) {
		if !v.OK || !of.OK || of.V <= 0 {
			return 0, false
		}
		return v.V / of.V, true
	}
	switch i {
	case colUtil:
		return ratio(g.Util, model.Some(100))
	case colMem:
		return ratio(g.MemUsed, g.MemTotal)
	case colPower:
		return ratio(g.Power, g.PowerLimit)
	case colTemp:
		ref := g.TempSlowdown
		if !ref.OK {
			ref = model.Some(c.t.GPUTemp + 10)
		}
		return ratio(g.Temp, ref)
	}
	return 0, false
}

// style is column i's colour for g, from the thresholds (Judge is the one
// place numbers become levels); power has no threshold of its own, so its
// bar is drawn plain (a power cap shows among the throttle reasons).
func (c *gpuCols) style(s *Styles, g model.GPU, i int, waiting model.Opt) Ink {
	switch i {
	case colUtil:
		if !g.Util.OK {
			return plainInk
		}
		if c.idle && c.engine[g.Index] && g.Util.V < c.t.GPUIdle {
			return s.Level(LevelWarn)
		}
		return s.Level(LevelOK)
	case colMem:
		f, ok := c.fraction(g, colMem)
		return s.Judged(c.t, MGPUMem, optOf(f, ok))
	case colTemp:
		// gpu_throttle's word: near the GPU's own slowdown temperature
		// (no verdict without it).
		if sev, ok := diagnosis.GPUHeat(g); ok {
			return s.Level(levelOf(sev))
		}
		return plainInk
	}
	return plainInk
}

// row is one GPU: index, name, then util, memory, power and temperature,
// each a bar (when there is room) and its value; without a detail line the
// throttle reasons and read errors follow. A bar is drawn from block and
// shade characters, so it shows magnitude without colour too.
func (c *gpuCols) row(s *Styles, g model.GPU, waiting model.Opt, detail bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%*d %s", c.idxW, g.Index, fit(clip(gpuName(g, c.long), c.nameW), c.nameW))
	if g.Lost {
		what, advice := lostReason(g.Err)
		l := " GPU lost (" + what + ")"
		if !detail && advice != "" {
			l += ": " + advice
		}
		b.WriteString(s.Crit.Render(l))
		return b.String()
	}
	for i := range nCols {
		v := c.value(g, i)
		if v == notSupported {
			b.WriteString(" " + s.Faint.Render(fmt.Sprintf("%*s", c.cellW(i), v)))
			continue
		}
		cell := fmt.Sprintf("%*s", c.valW[i], v)
		if c.barW > 0 {
			bar := strings.Repeat(" ", c.barW)
			if f, ok := c.fraction(g, i); ok {
				bar = barOf(f, c.barW)
			}
			cell = bar + " " + cell
		}
		b.WriteString(" " + c.style(s, g, i, waiting).Render(fmt.Sprintf("%*s", c.cellW(i), cell)))
	}
	if !detail {
		if tl := gpuTail(g); tl != "" {
			b.WriteString(" " + s.Warn.Render(tl))
		}
	}
	return b.String()
}

// barOf is bar, except that a value above its reference (a power draw
// over the limit, a temperature past slowdown) fills the bar rather than
// hiding it, and any value above zero shows at least one cell.
func barOf(f float64, w int) string {
	if f > 0 && f*float64(w) < 0.5 {
		f = 0.5 / float64(w)
	}
	return bar(math.Min(f, 1), w)
}

// lostReason splits a lost GPU's Err ("ERROR_GPU_IS_LOST: check dmesg…")
// into the code and the advice.
func lostReason(err string) (what, advice string) {
	if err == "" {
		return "stopped answering", ""
	}
	if i := strings.Index(err, ": "); i > 0 {
		return err[:i], err[i+2:]
	}
	return err, ""
}

// gpuTail is what a row adds when there is no detail line: the throttle
// reasons and the fields that could not be read.
func gpuTail(g model.GPU) string {
	var parts []string
	if len(g.Throttle) > 0 {
		parts = append(parts, strings.Join(g.Throttle, ","))
	}
	if g.Err != "" {
		parts = append(parts, g.Err)
	}
	return strings.Join(parts, " · ")
}

// levelOf is the screen's level for a diagnosis severity.
func levelOf(sev model.Severity) Level {
	switch sev {
	case model.SevCrit:
		return LevelCrit
	case model.SevWarn:
		return LevelWarn
	}
	return LevelOK
}

// engineIdle is gpu_idle_waiting's condition and the engine's GPUs, for
// the GPU rows' utilisation colours.
func engineIdle(g *model.GPUSnapshot, waiting model.Opt, cfg diagnosis.Config) (map[int]bool, bool) {
	set := map[int]bool{}
	for _, x := range diagnosis.EngineGPUs(g) {
		set[x.Index] = true
	}
	u := diagnosis.EngineGPUUtil(g)
	return set, u.OK && u.V < cfg.GPUIdleUtil && waiting.OK && waiting.V >= 1
}
