package tui

import (
	"fmt"
	"image/color"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// The frame is put together from what did not change since the last one
// (a pane's box, its lines, a chart, a screen row). These tests change one
// input at a time and hold every frame equal to the same state drawn from
// scratch (Model.dropCaches), and changed where the input shows.

const otherURL = "http://127.0.0.1:8001"

// retarget is s as scraped from url.
func retarget(s model.Scrape, url string) model.Scrape {
	s.Endpoint = url
	s.Samples = append([]model.Sample(nil), s.Samples...)
	for i := range s.Samples {
		s.Samples[i].Endpoint = url
	}
	return s
}

// cacheModel is two endpoints (healthy and stressed) 70 s in, with the
// log and the host of the first, at 200×60.
func cacheModel(t *testing.T, noColor bool) (*Model, func(i int) []tea.Msg) {
	return cacheModelOf(t, noColor, []string{testURL, otherURL})
}

// cacheModelOf is cacheModel watching eps (the first, or both).
func cacheModelOf(t *testing.T, noColor bool, eps []string) (*Model, func(i int) []tea.Msg) {
	t.Helper()
	m := New(Options{Endpoints: eps, Now: t0, NoColor: noColor, NoGPU: true,
		Sources: map[string]string{"engine": "", "gpu": "", "logs": "", "host": ""}})
	m.Update(model.GPUSnapshot{Time: t0, Err: "GPU reading off (--no-gpu)"})
	a, b := scrapes(200, varied), scrapes(200, stressed)
	second := func(i int) []tea.Msg {
		log := model.LogLine{Time: a[i].Time.Add(-300 * time.Millisecond), Endpoint: testURL,
			Text: fmt.Sprintf(`INFO:     127.0.0.1:%d - "POST /v1/chat/completions HTTP/1.1" 200 OK`, 50000+i)}
		if len(eps) == 1 {
			return []tea.Msg{a[i], log, log}
		}
		return []tea.Msg{a[i], retarget(b[i], otherURL), log}
	}
	for i := 0; i < 70; i++ {
		for _, msg := range second(i) {
			m.Update(msg)
		}
		if i%3 == 0 {
			m.Update(hostReading(a[i].Time))
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	if len(eps) > 1 {
		m.Update(closeOverlayMsg{}) // from the fleet to the first endpoint's panes
	}
	return m, second
}

// sameAsScratch renders m with its caches, then from scratch, and fails
// when the two differ; it returns the frame.
func sameAsScratch(t *testing.T, m *Model, what string) string {
	t.Helper()
	cached := m.Render()
	m.dropCaches()
	scratch := m.Render()
	if cached != scratch {
		c, s := strings.Split(ansi.Strip(cached), "\n"), strings.Split(ansi.Strip(scratch), "\n")
		for i := range min(len(c), len(s)) {
			if c[i] != s[i] {
				t.Fatalf("after %s the cached frame's line %d differs from the frame drawn from scratch:\ncached  %q\nscratch %q", what, i, c[i], s[i])
			}
		}
		t.Fatalf("after %s the cached frame differs from the frame drawn from scratch (in its colours, or its length: %d lines against %d)", what, len(c), len(s))
	}
	return scratch
}

// Each input changed alone: the frame changes where it shows and is what
// a frame drawn from scratch is, in colour and without.
func TestFrameCacheOneInputAtATime(t *testing.T) {
	for _, noColor := range []bool{false, true} {
		t.Run(fmt.Sprintf("noColor=%v", noColor), func(t *testing.T) {
			m, second := cacheModel(t, noColor)
			before := sameAsScratch(t, m, "the start")
			at := 70
			last := func() time.Time { return m.d.Now }
			steps := []struct {
				what   string
				do     func()
				change string // a text the frame must show after the step ("" : none asked)
			}{
				{"a scrape (each series gains a point)", func() { m.Update(second(at)[0]); at++ }, ""},
				{"a log line", func() { m.Update(second(at)[2]) }, ""},
				{"a host reading with another CPU", func() {
					h := hostReading(last())
					h.CPUBusy = model.Some(0.77)
					m.Update(h)
				}, "CPU 77% of 16"},
				{"the window", func() { m.Update(press("]")) }, "window 5m"},
				{"a resize", func() { m.Update(tea.WindowSizeMsg{Width: 201, Height: 61}) }, ""},
				{"the selection", func() { m.Update(press("right")) }, otherURL},
				{"the selection back", func() { m.Update(press("left")) }, "CPU 77% of 16"},
				{"the focus", func() { m.Update(press("tab")) }, ""},
				{"a zoom", func() { m.Update(press("2")) }, ""},
				{"the zoom closed", func() { m.Update(press("esc")) }, ""},
				{"a light terminal", func() { m.Update(tea.BackgroundColorMsg{Color: color.White}) }, ""},
				{"a clock tick within the second", func() { m.Update(tickMsg(last().Add(400 * time.Millisecond))) }, ""},
				{"the clock past the stale mark", func() { m.Update(tickMsg(last().Add(4 * time.Second))) }, "ago)"},
			}
			for _, st := range steps {
				st.do()
				got := sameAsScratch(t, m, st.what)
				if st.change != "" && !strings.Contains(ansi.Strip(got), st.change) {
					t.Errorf("after %s the frame does not show %q", st.what, st.change)
				}
				if st.what == "a scrape (each series gains a point)" && got == before {
					t.Errorf("a scrape changed nothing on screen")
				}
				before = got
			}
			// a stale screen's age counts seconds: each second boundary
			// the clock passes shows, none it does not pass
			age := func() string {
				s := ansi.Strip(m.Render())
				i := strings.Index(s, "ago)")
				if i < 0 {
					t.Fatal("no age on a stale screen")
				}
				return s[strings.LastIndex(s[:i], "(")+1 : i]
			}
			was := age()
			for k := 1; k <= 6; k++ {
				m.Update(tickMsg(last().Add(500 * time.Millisecond)))
				sameAsScratch(t, m, "half a second more of a stale screen")
				if k%2 == 0 { // a whole second since was
					if now := age(); now == was {
						t.Errorf("a second passed and the age still reads %q", now)
					} else {
						was = now
					}
				}
			}
		})
	}
}

// A chart whose points are the same is not plotted again; one whose
// newest point moved is.
func TestChartKeptWhilePointsAreTheSame(t *testing.T) {
	d := &Data{}
	pts := []model.Point{{T: t0, V: 1, OK: true}, {T: t0.Add(time.Second), V: 2, OK: true}}
	a := chart(d, "c", pts, 60, 8, fmtCount)
	b := chart(d, "c", append([]model.Point(nil), pts...), 60, 8, fmtCount)
	if unsafe.SliceData(a) != unsafe.SliceData(b) {
		t.Error("the same points plotted again")
	}
	pts[1].V = 3
	c := chart(d, "c", pts, 60, 8, fmtCount)
	if strings.Join(c, "\n") == strings.Join(a, "\n") {
		t.Error("a moved point drew the old chart")
	}
	if got, want := strings.Join(c, "\n"), strings.Join(plot(pts, 60, 8, fmtCount, false), "\n"); got != want {
		t.Errorf("kept chart:\n%s\nplotted:\n%s", got, want)
	}
	if got := chart(d, "c", pts, 61, 8, fmtCount); ansi.StringWidth(got[0]) != 61 {
		t.Errorf("a wider chart drew the old one (%d wide)", ansi.StringWidth(got[0]))
	}
}

// Between host readings the Host pane is not drawn again, and a box line
// whose content did not change is the last frame's line.
func TestUnchangedPanesAndLinesAreKept(t *testing.T) {
	m, second := cacheModel(t, false)
	m.Render()
	host := m.paneIndex("host")
	box := m.panes[host].cached
	if box == nil {
		t.Fatal("the Host pane is not in the grid")
	}
	m.Update(second(70)[0])
	m.Render()
	if unsafe.SliceData(m.panes[host].cached) != unsafe.SliceData(box) {
		t.Error("a scrape drew the Host pane again: it shows the host reading only")
	}
	m.Update(hostReading(m.d.Now))
	m.Render()
	if unsafe.SliceData(m.panes[host].cached) == unsafe.SliceData(box) {
		t.Fatal("a new host reading did not draw the Host pane again")
	}
	// the scheduler's last line (its box's bottom edge) and the rows of
	// the screen with nothing new stay the same strings
	sched := m.paneIndex("scheduler")
	old := m.panes[sched].cached
	oldRows := append([]string(nil), m.rows...)
	m.Update(second(71)[0])
	m.Render()
	now := m.panes[sched].cached
	if unsafe.StringData(now[len(now)-1]) != unsafe.StringData(old[len(old)-1]) {
		t.Error("the scheduler's bottom edge was drawn again")
	}
	kept := 0
	for i := range m.rows {
		if unsafe.StringData(m.rows[i]) == unsafe.StringData(oldRows[i]) {
			kept++
		}
	}
	if kept == 0 {
		t.Error("no screen row was kept between two frames")
	}
}

// Any sequence of inputs: every frame is the frame drawn from scratch.
// The steps mix data (scrapes of either endpoint, log lines, host
// readings, GPU snapshots), the clock (ticks of a fraction of a second to
// several, past the stale mark and the age texts' steps), and what a
// person does (focus, zoom of each pane, the window, the selection, a
// pause, a resize).
func TestFrameCacheRandomWalk(t *testing.T) {
	for i, c := range []struct {
		noColor bool
		eps     []string
	}{{false, []string{testURL, otherURL}}, {true, []string{testURL, otherURL}}, {false, []string{testURL}}, {true, []string{testURL}}} {
		noColor := c.noColor
		m, second := cacheModelOf(t, noColor, c.eps)
		if len(c.eps) == 1 && !strings.Contains(ansi.Strip(m.Render()), "no findings") {
			t.Fatal("one healthy endpoint has findings: the all-clear view goes untested")
		}
		rng := rand.New(rand.NewPCG(33, uint64(i)))
		at := 70
		keys := []string{"tab", "1", "2", "3", "4", "5", "6", "7", "8", "9", "esc", "]", "[", "right", "left", "p", "j", "k"}
		for step := 0; step < 400; step++ {
			var what string
			switch r := rng.IntN(10); {
			case r < 3 && at < 199:
				msgs := second(at)
				at++
				for _, msg := range msgs[:1+rng.IntN(3)] {
					m.Update(msg)
				}
				what = "a scrape"
			case r < 4:
				m.Update(hostReading(m.d.Now.Add(-time.Duration(rng.IntN(900)) * time.Millisecond)))
				what = "a host reading"
			case r < 7:
				d := time.Duration(rng.IntN(2600)) * time.Millisecond
				m.Update(tickMsg(m.d.Now.Add(d)))
				what = "a tick of " + d.String()
			case r < 8:
				m.Update(gpus(1+rng.IntN(2), m.d.Now, rng.IntN(2) == 0))
				what = "a GPU snapshot"
			case r < 9:
				k := keys[rng.IntN(len(keys))]
				m.Update(press(k))
				what = "the key " + k
			default:
				w, h := 120+rng.IntN(140), 40+rng.IntN(30)
				m.Update(tea.WindowSizeMsg{Width: w, Height: h})
				what = fmt.Sprintf("a resize to %d×%d", w, h)
			}
			sameAsScratch(t, m, fmt.Sprintf("step %d (%s, noColor %v, %d endpoints)", step, what, noColor, len(c.eps)))
		}
	}
}

// durTextNext is where fmtDur's text changes: the same just before it,
// different at it.
func TestDurTextNextIsWhereTheTextChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		el := time.Duration(rng.Int64N(int64(72 * time.Hour)))
		switch i % 4 {
		case 0:
			el %= 2 * time.Second
		case 1:
			el %= 2 * time.Minute
		case 2:
			el = el.Round(500*time.Millisecond) - time.Duration(rng.IntN(3)) // at a step's edge
		}
		next := durTextNext(el)
		if next <= el {
			t.Fatalf("durTextNext(%v) = %v, not past it", el, next)
		}
		if a, b := fmtDur(el), fmtDur(next-1); a != b {
			t.Fatalf("fmtDur(%v) = %q but fmtDur(%v) = %q: it changed before durTextNext", el, a, next-1, b)
		}
		if a, b := fmtDur(el), fmtDur(next); a == b {
			t.Fatalf("fmtDur(%v) and fmtDur(%v) are both %q: durTextNext is not where it changes", el, next, a)
		}
	}
}
