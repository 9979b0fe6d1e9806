package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) {
	time.Local = time.UTC // event times render in local time
	os.Exit(m.Run())
}

// golden compares got with testdata/name.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./tui -run %s -update to accept):\n--- got\n%s\n--- want\n%s", name, t.Name(), got, want)
	}
}

// screen renders m at w×h without colour and checks every line's width.
func screen(t *testing.T, m *Model, w, h int) string {
	t.Helper()
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	out := ansi.Strip(m.Render())
	ls := strings.Split(out, "\n")
	if len(ls) != h {
		t.Errorf("%d×%d: %d lines, want %d", w, h, len(ls), h)
	}
	for i, l := range ls {
		if n := ansi.StringWidth(l); n != w {
			t.Errorf("%d×%d: line %d is %d cells wide, want %d: %q", w, h, i, n, w, l)
		}
	}
	return out
}

func newTestModel() *Model {
	return New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true,
		Sources: map[string]string{"engine": "", "gpu": "", "logs": ""}})
}

// scenario builds a model that has seen 120 s of f and an n-GPU box.
func scenario(f func(int) load, nGPU int, hot bool) *Model {
	m := newTestModel()
	ss := scrapes(120, f)
	for _, s := range ss {
		m.Update(s)
		m.Update(gpus(nGPU, s.Time, hot)) // NVML is read every refresh too
	}
	last := ss[len(ss)-1].Time
	feedLogs(m, last.Add(-20*time.Second), hot)
	m.Update(tickMsg(last.Add(time.Second))) // the rules run on the clock
	return m
}

var sizes = []struct {
	name string
	w, h int
}{{"80x24", 80, 24}, {"120x40", 120, 40}, {"200x60", 200, 60}, {"250x70", 250, 70}}

func TestGoldenHealthyAndStressed(t *testing.T) {
	for _, c := range []struct {
		name string
		m    func() *Model
	}{
		{"healthy", func() *Model { return scenario(healthy, 1, false) }},
		{"stressed", func() *Model { return scenario(stressed, 8, true) }},
	} {
		for _, sz := range sizes {
			t.Run(c.name+"_"+sz.name, func(t *testing.T) {
				golden(t, c.name+"_"+sz.name, screen(t, c.m(), sz.w, sz.h))
			})
		}
	}
}

func TestGoldenGPU(t *testing.T) {
	for _, n := range []int{1, 8} {
		for _, sz := range []struct {
			name string
			w, h int
		}{{"80x24", 80, 24}, {"200x60", 200, 60}} {
			name := "gpu" + string(rune('0'+n)) + "_" + sz.name
			t.Run(name, func(t *testing.T) {
				m := scenario(healthy, n, n == 8)
				if sz.w < twoColW {
					m.Update(press("4"))
				}
				golden(t, name, screen(t, m, sz.w, sz.h))
			})
		}
	}
}

func TestGoldenOverlaysAndEdges(t *testing.T) {
	cases := []struct {
		name string
		w, h int
		prep func(m *Model)
	}{
		{"help_120x40", 120, 40, func(m *Model) { m.Update(press("?")) }},
		{"explain_120x40", 120, 40, func(m *Model) { m.Update(press("e")) }},
		{"logs_search_120x40", 120, 40, func(m *Model) {
			m.Update(press("l"))
			for _, k := range []string{"/", "p", "r", "e", "e", "m", "p", "t", "enter"} {
				m.Update(press(k))
			}
		}},
		{"too_small_50x12", 50, 12, func(m *Model) {}},
		{"no_gpu_driver_80x24", 80, 24, func(m *Model) {
			m.Update(press("4"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := scenario(stressed, 8, true)
			if c.name == "no_gpu_driver_80x24" {
				m = newTestModel()
				m.Update(modelGPUErr("no NVIDIA driver: libnvidia-ml.so.1 not found"))
			}
			m.Update(tea.WindowSizeMsg{Width: c.w, Height: c.h})
			c.prep(m)
			golden(t, c.name, screen(t, m, c.w, c.h))
		})
	}
}
