package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

const foreignNote = "8 GPU process(es) belong to another PID namespace: run llmtop with --pid=host (docker) or hostPID: true (Kubernetes) to see which"

// gpuScenario is scenario(stressed, …) with the GPU snapshot edited by f.
func gpuScenario(n int, f func(*model.GPUSnapshot)) *Model {
	m := newTestModel()
	ss := scrapes(120, stressed)
	for _, s := range ss {
		m.Update(s)
	}
	last := ss[len(ss)-1].Time
	snap := gpus(n, last, true)
	f(&snap)
	m.Update(snap)
	feedLogs(m, last.Add(-20*time.Second), true)
	m.Update(tickMsg(last.Add(500 * time.Millisecond)))
	return m
}

// lostGPU5 is GPU 5 of 8 fallen off the bus, as the NVML source reports it.
func lostGPU5(s *model.GPUSnapshot) {
	g := &s.GPUs[5]
	*g = model.GPU{Index: 5, UUID: g.UUID, Name: g.Name, Util: g.Util, Lost: true,
		Err: "ERROR_GPU_IS_LOST: check dmesg for an Xid; the GPU may need a reset"}
}

// gb10 is a unified-memory GB10: NVML has no memory numbers and no power
// limit for it.
func gb10(s *model.GPUSnapshot) {
	g := &s.GPUs[0]
	g.Name = "NVIDIA GB10"
	g.MemUsed, g.MemTotal, g.PowerLimit, g.Throttle = model.None, model.None, model.None, nil
	g.Temp, g.TempSlowdown = model.Some(61), model.Some(95)
	g.SMClock, g.SMClockMax = model.Some(2418), model.Some(3003)
	g.Unsupported = []string{model.GPUFieldMemUsed, model.GPUFieldMemTotal, model.GPUFieldPowerLimit, model.GPUFieldFan}
}

func foreign(s *model.GPUSnapshot) {
	for i := range s.GPUs {
		s.GPUs[i].Processes = []model.GPUProcess{{PID: 91234 + i, UsedMem: model.Some(70 * (1 << 30)), Foreign: true}}
	}
	s.Note = foreignNote
}

func TestGoldenGPUEdges(t *testing.T) {
	for _, c := range []struct {
		name string
		w, h int
		n    int
		f    func(*model.GPUSnapshot)
	}{
		{"gpu8_lost_80x24", 80, 24, 8, lostGPU5},
		{"gpu8_lost_200x60", 200, 60, 8, lostGPU5},
		{"gpu_na_80x24", 80, 24, 1, gb10},
		{"gpu8_foreign_80x24", 80, 24, 8, foreign},
		{"gpu8_foreign_120x40", 120, 40, 8, foreign},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := gpuScenario(c.n, c.f)
			if c.w < twoColW {
				m.Update(press("4"))
			}
			golden(t, c.name, screen(t, m, c.w, c.h))
		})
	}
}

// gpuView draws the GPU pane alone at w×h, without colour, its lines cut
// to w cells as the pane's box cuts them.
func gpuView(t *testing.T, snap model.GPUSnapshot, w, h int) []string {
	t.Helper()
	m := newTestModel()
	m.Update(snap)
	ls := strings.Split(ansi.Strip((&gpuPane{}).View(m.d, w, h)), "\n")
	if len(ls) > h {
		t.Errorf("%d lines in %d", len(ls), h)
	}
	for i, l := range ls {
		ls[i] = fit(l, w) // as the pane's box does
	}
	return ls
}

// A field the device does not support reads n/a in its own column, and
// only there; a field that was merely not read reads "--".
func TestGPUUnsupportedFieldIsNA(t *testing.T) {
	snap := gpus(1, t0, false)
	g := &snap.GPUs[0]
	g.Power = model.None
	g.Unsupported = []string{model.GPUFieldPower, model.GPUFieldFan}
	g.Temp = model.None // not read: no entry in Unsupported
	for _, w := range []int{40, 58, 64, 78, 120} {
		ls := gpuView(t, snap, w, 10)
		labels, row := ls[1], ls[2]
		if strings.Count(row, notSupported) != 1 {
			t.Fatalf("w=%d: want exactly one n/a in %q", w, row)
		}
		// n/a ends under the power label's column, -- under temp's
		col := func(l, sub string) int { // in cells
			if i := strings.Index(l, sub); i >= 0 {
				return ansi.StringWidth(l[:i])
			}
			return -1
		}
		na := col(row, notSupported)
		pw, tp := col(labels, "power"), col(labels, "temp")
		if pw < 0 || tp < 0 || na < pw || na > tp {
			t.Errorf("w=%d: n/a at %d, power column %d–%d:\n%s\n%s", w, na, pw, tp, labels, row)
		}
		if !strings.HasSuffix(strings.TrimRight(row, " "), missing) || strings.Count(row, missing) != 1 {
			t.Errorf("w=%d: temperature not read should be %q: %q", w, missing, row)
		}
		if !strings.Contains(row, "91%") || !strings.Contains(row, "72/80Gi") {
			t.Errorf("w=%d: the other fields must stay: %q", w, row)
		}
	}
	// the same power, not read rather than unsupported, is "--"
	g.Unsupported = nil
	if row := gpuView(t, snap, 64, 10)[2]; strings.Contains(row, notSupported) || strings.Count(row, missing) != 2 {
		t.Errorf("missing power: %q", row)
	}
}

func TestGPUDetailNA(t *testing.T) {
	snap := gpus(1, t0, false)
	gb10(&snap)
	ls := gpuView(t, snap, 78, 10)
	if !strings.Contains(ls[2], "n/a") || strings.Count(ls[2], "n/a") != 1 {
		t.Errorf("row %q: memory n/a only", ls[2])
	}
	if !strings.Contains(ls[2], "612W") || strings.Contains(ls[2], "612/") {
		t.Errorf("row %q: power without its unsupported limit", ls[2])
	}
	if strings.TrimRight(ls[3], " ") != "  engine 70.0Gi · other 1.5Gi · SM 2418/3003 MHz · power limit n/a" {
		t.Errorf("detail %q", ls[3])
	}
	g := &snap.GPUs[0]
	// No engine process on the GPU (the sim runs on the CPU): said, not
	// "engine 0B", which read as an engine holding nothing.
	g.Processes = []model.GPUProcess{{PID: 4242, Name: "python3", UsedMem: model.Some(1.5 * (1 << 30))}}
	if ls = gpuView(t, snap, 120, 10); !strings.HasPrefix(ls[3], "  no engine process on this GPU · other 1.5Gi · SM") {
		t.Errorf("detail without an engine process %q", ls[3])
	}
	g.Processes = append(g.Processes, model.GPUProcess{PID: 77, Foreign: true, UsedMem: model.Some(2 << 30)})
	if ls = gpuView(t, snap, 120, 10); !strings.HasPrefix(ls[3], "  no engine among the processes seen · other 1.5Gi · another PID namespace 2.0Gi") {
		t.Errorf("detail with a process of another PID namespace %q", ls[3])
	}
	g.Processes = nil
	g.Unsupported = append(g.Unsupported, model.GPUFieldProcesses, model.GPUFieldSMClock)
	g.SMClock = model.None
	g.Err = "could not read temperature (ERROR_TIMEOUT)"
	ls = gpuView(t, snap, 120, 10)
	if want := "  processes n/a · SM clock n/a · power limit n/a · could not read temperature (ERROR_TIMEOUT)"; strings.TrimRight(ls[3], " ") != want {
		t.Errorf("detail %q\nwant   %q", ls[3], want)
	}
	g.Unsupported = nil
	if ls = gpuView(t, snap, 120, 10); !strings.HasPrefix(ls[3], "  processes -- · could not") {
		t.Errorf("not read is not n/a: %q", ls[3])
	}
}

// The bars scale to their references: util of 100 %, memory of the total,
// power of the limit, temperature of the slowdown threshold.
func TestGPUBars(t *testing.T) {
	snap := gpus(1, t0, false)
	g := &snap.GPUs[0]
	g.Util, g.MemUsed, g.MemTotal = model.Some(50), model.Some(20*(1<<30)), model.Some(80*(1<<30))
	g.Power, g.PowerLimit, g.Temp, g.TempSlowdown = model.Some(700), model.Some(700), model.Some(45), model.Some(90)
	row := gpuView(t, snap, 78, 10)[2]
	for _, want := range []string{"█████░░░░░ 50%", "███░░░░░░░ 20/80Gi", "██████████ 700/700W", "█████░░░░░ 45°C"} {
		if !strings.Contains(row, want) {
			t.Errorf("want %q in %q", want, row)
		}
	}
}

// Narrower, the bars shrink and then go; the values stay.
func TestGPURowDegrades(t *testing.T) {
	snap := gpus(2, t0, true)
	prev := 1 << 30
	for _, w := range []int{78, 64, 58, 48, 40} {
		ls := gpuView(t, snap, w, 4) // no detail lines: throttle reasons on the row
		row := ls[2]
		bars := strings.Count(row, "█") + strings.Count(row, "░")
		if bars > prev {
			t.Errorf("w=%d: bars grew (%d > %d)", w, bars, prev)
		}
		prev = bars
		for _, v := range []string{"99%", "72/80Gi", "612", "88°C"} {
			if !strings.Contains(row, v) {
				t.Errorf("w=%d: value %q dropped before the bars: %q", w, v, row)
			}
		}
		if w >= 58 && (bars == 0 || !strings.Contains(row, "power cap")) {
			t.Errorf("w=%d: bars and throttle reasons should fit: %q", w, row)
		}
	}
	if prev != 0 {
		t.Errorf("at 40 cells the bars should be gone")
	}
}

// A pane too short for the note gives it a line of its own anyway, shortened.
func TestGPUNoteKeptWhenShort(t *testing.T) {
	snap := gpus(8, t0, false)
	foreign(&snap)
	for _, h := range []int{2, 4, 11} {
		ls := gpuView(t, snap, 64, h)
		last := ls[len(ls)-1]
		if !strings.HasPrefix(last, "8 GPU process(es) belong to another PID namespace") || !strings.HasSuffix(last, "(zoom 4)") {
			t.Errorf("h=%d: last line %q, want the short note", h, last)
		}
	}
	if ls := gpuView(t, snap, 64, 1); !strings.Contains(ls[0], "note: 8 GPU process(es)") {
		t.Errorf("h=1: %q", ls[0])
	}
	// with room, the whole note, wrapped
	ls := gpuView(t, snap, 64, 30)
	if all := strings.Join(strings.Fields(strings.Join(ls, " ")), " "); !strings.HasSuffix(all, foreignNote) {
		t.Errorf("full note missing:\n%s", strings.Join(ls, "\n"))
	}
	m := newTestModel()
	m.Update(snap)
	if k := len(noteLines(foreignNote, 64)); k < 2 || (&gpuPane{}).Height(m.d, 64) != 2+8+k {
		t.Errorf("height should count the %d note lines", k)
	}
}

func TestMemShort(t *testing.T) {
	gi := float64(1 << 30)
	for _, c := range []struct {
		u, t model.Opt
		want string
	}{
		{model.Some(71.5 * gi), model.Some(80 * gi), "72/80Gi"},
		{model.Some(0.5 * gi), model.Some(24 * gi), "0.5/24Gi"},
		{model.Some(512 << 20), model.Some(768 << 20), "512/768Mi"},
		{model.None, model.Some(80 * gi), "--/80Gi"},
		{model.Some(gi), model.None, "1.0Gi/--"},
	} {
		if got := memShort(c.u, c.t); got != c.want {
			t.Errorf("memShort(%v, %v) = %q, want %q", c.u, c.t, got, c.want)
		}
	}
}

// With room (a zoomed pane), a cluster GPU's whole name shows: model, host
// and pod, not "H100 80GB HBM3 …".
func TestGPUNamesWholeWhenRoom(t *testing.T) {
	g := model.GPU{Index: 0, Name: "NVIDIA H100 80GB HBM3", Util: model.Some(35),
		Owner: &model.GPUOwner{Host: "node-1", Namespace: "llm", Pod: "vllm-0"}}
	want := "H100 80GB HBM3@node-1 llm/vllm-0"
	if c := layoutGPU(DefaultThresholds, []model.GPU{g}, 178, false); !c.long || c.nameW < len(want) {
		t.Errorf("at 178 cells the name gets %d cells (long %v), want %d", c.nameW, c.long, len(want))
	}
	if c := layoutGPU(DefaultThresholds, []model.GPU{g}, 60, false); c.barW < maxBar/2 {
		t.Errorf("at 60 cells the long name took the bars below half: %+v", c)
	}
}

// The processes holding GPU memory are listed under the GPU rows, as
// nvidia-smi's table has them (most memory first, the engine named, one in
// another PID namespace said so); with too little room the last line
// counts the rest. The pane asks room for them with up to four GPUs. On a
// real H100 the pane had no line naming them (scripts/gpu-check.sh).
func TestGPUPaneListsProcesses(t *testing.T) {
	snap := gpus(2, t0, false)
	snap.GPUs[0].Processes = []model.GPUProcess{
		{PID: 10, Name: "jupyter", UsedMem: model.Some(1 << 30)},
		{PID: 4242, Name: "VLLM::Worker_TP0", Engine: "vllm", UsedMem: model.Some(70 << 30)},
		{PID: 11, Name: "mystery"}, // NVML gave no memory
	}
	snap.GPUs[1].Processes = []model.GPUProcess{{PID: 91234, Foreign: true, UsedMem: model.Some(2 << 30)}}
	m := newTestModel()
	m.Update(snap)
	if h := (&gpuPane{}).Height(m.d, 100); h != 2+2*2+1+4 {
		t.Errorf("height %d, want summary+labels, two lines a GPU, the header and four processes", h)
	}
	ls := gpuView(t, snap, 100, 20)
	text := strings.Join(ls, "\n")
	var order []string
	head := slices.IndexFunc(ls, func(l string) bool { return strings.Contains(l, "PID      VRAM") })
	if head < 0 {
		t.Fatalf("no process header:\n%s", text)
	}
	for _, l := range ls[head:] {
		for _, name := range []string{"VLLM::Worker_TP0 · vllm", "another PID namespace", "jupyter", "mystery"} {
			if strings.Contains(l, name) {
				order = append(order, name)
			}
		}
	}
	if strings.Join(order, "|") != "VLLM::Worker_TP0 · vllm|another PID namespace|jupyter|mystery" {
		t.Errorf("processes in order %q, want most memory first, unknown memory last:\n%s", order, text)
	}
	if !strings.Contains(text, "   4242    70.0Gi  VLLM") || !strings.Contains(text, "      11        --  mystery") {
		t.Errorf("PID and memory columns:\n%s", text)
	}
	// six lines below the GPU rows for four processes: header, two, "… 2 more"
	short := gpuView(t, snap, 100, 2+4+4)
	if got := strings.Join(short, "\n"); !strings.Contains(got, "… 2 more processes (zoom 4)") || strings.Contains(got, "jupyter") {
		t.Errorf("short pane:\n%s", got)
	}
	// a pane with no room for the detail lines lists none
	if got := strings.Join(gpuView(t, snap, 100, 4), "\n"); strings.Contains(got, "PID") {
		t.Errorf("no room, yet:\n%s", got)
	}
}
