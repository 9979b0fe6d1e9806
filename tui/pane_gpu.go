package tui

import (
	"fmt"
	"math"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
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
	return []key.Binding{key.NewBinding(key.WithKeys("j", "k"), key.WithHelp("j/k", "scroll GPUs (focused)"))}
}

func (p *gpuPane) Scroll(delta int) { p.top = max(0, p.top+delta) }

func (*gpuPane) Height(d *Data, w int) int {
	if d.GPU == nil || d.GPU.Err != "" || len(d.GPU.GPUs) == 0 {
		return 1
	}
	// summary, column labels, one row each and the note; the second
	// (detail) line per GPU only in space left over
	return 2 + len(d.GPU.GPUs) + len(noteLines(d.GPU.Note, w))
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
		out = append(out, s.Faint.Render(fmt.Sprintf("… %d more (focus and j/k, or zoom 4)", n-p.top-shown)))
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
	case d.Now.Sub(d.Started) > 3*d.Interval:
		return "no GPU reading: the GPU source sent nothing (--no-gpu turns it off)"
	default:
		return "waiting for the first GPU reading…"
	}
}

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
	t      Thresholds
	idxW   int
	nameW  int
	long   bool // full names ("H100 80GB HBM3") rather than the first word
	barW   int  // 0: no bars
	limits bool // power as draw/limit
	valW   [nCols]int
}

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
	// Room to spare goes to the full names.
	if lw := min(longW, 16); lw > c.nameW && c.width()+tailW+lw-c.nameW <= w {
		c.nameW, c.long = lw, true
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
// of it ("H100 80GB HBM3").
func gpuName(g model.GPU, long bool) string {
	name := strings.TrimPrefix(strings.TrimPrefix(g.Name, "NVIDIA "), "Tesla ")
	if f := strings.Fields(name); !long && len(f) > 0 {
		name = f[0]
	}
	if name == "" {
		name = "GPU"
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
func (c *gpuCols) style(s *Styles, g model.GPU, i int, waiting model.Opt) lipgloss.Style {
	switch i {
	case colUtil:
		return s.Judged(c.t, MGPUUtil, g.Util, waiting.Or(0))
	case colMem:
		f, ok := c.fraction(g, colMem)
		return s.Judged(c.t, MGPUMem, optOf(f, ok))
	case colTemp:
		return s.Judged(c.t, MGPUTemp, g.Temp)
	}
	return lipgloss.NewStyle()
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
	out := s.Faint.Render("  " + strings.Join(parts, " · "))
	if tl := gpuTail(g); tl != "" {
		out += s.Faint.Render(" · ") + s.Warn.Render(tl)
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
