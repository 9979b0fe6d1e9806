package tui

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// withProbeOverlay registers the `o` overlay with run for one test (cmd
// registers it with the real probe).
func withProbeOverlay(t *testing.T, run ProbeRunner) {
	saved := append([]OverlaySpec(nil), overlaySpecs...)
	t.Cleanup(func() { overlaySpecs = saved })
	RegisterOverlay(OverlaySpec{ID: "probe", Key: DefaultKeyMap().Probe, New: func() Overlay { return NewProbeOverlay(run) }})
}

// realProbe is llama-server's answer to `llmtop probe` (a real capture:
// ../diagnosis/testdata/probe/README.md), with a title that tries to move
// the cursor.
func realProbe(t *testing.T) model.Behaviour {
	raw, err := os.ReadFile("../diagnosis/testdata/probe/llamacpp-b1-de3ff81.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Behaviour model.Behaviour }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Behaviour
}

// driveProbe runs cmd and every command its messages lead to (bounded), as the
// Bubble Tea runtime would, skipping the clock's ticks.
func driveProbe(m *Model, cmd tea.Cmd) {
	for i := 0; cmd != nil && i < 20; i++ {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			cmd = nil
			for _, c := range b {
				if c != nil {
					if _, tick := c().(tickMsg); !tick {
						driveProbe(m, c)
					}
				}
			}
			return
		}
		if msg == nil {
			return
		}
		_, cmd = m.Update(msg)
	}
}

// o probes the selected endpoint off the Update loop, shows the result and
// its findings, x shows the raw exchanges, and the result reaches the core
// (the diagnosis and the run).
func TestProbeOverlayShowsResultAndFeedsTheCore(t *testing.T) {
	b := realProbe(t)
	b.Identity.Model = "tiny\x1b[2Jmodel"
	step := make(chan struct{})
	var asked string
	withProbeOverlay(t, func(ctx context.Context, url string, progress func(string)) (model.Behaviour, error) {
		asked = url
		progress("determinism")
		<-step
		b.Endpoint = url
		b.Time = t0.Add(30 * time.Second)
		return b, nil
	})
	m := newTestModel()
	for _, s := range scrapes(40, stressed) {
		m.Update(s)
		m.Update(tickMsg(s.Time))
	}
	_, cmd := m.Update(press("o"))
	if cmd == nil {
		t.Fatal("o started nothing")
	}
	msg := cmd() // the first step's news
	m.Update(msg)
	if out := screen(t, m, 120, 40); !strings.Contains(out, "probing: determinism…") {
		t.Errorf("no progress shown:\n%s", out)
	}
	close(step)
	var o *probeOverlay
	for _, e := range m.overlays {
		if e.id == "probe" {
			o = e.o.(*probeOverlay)
		}
	}
	_, next := m.Update(<-o.ch)
	driveProbe(m, next)
	if asked != testURL {
		t.Errorf("probed %q, want the selected endpoint %q", asked, testURL)
	}
	out := screen(t, m, 120, 40)
	for _, want := range []string{"Behaviour probe", "determinism    ok: two identical requests", "chat template  has its special tokens, chatml",
		"stop/length    one-word question, max_tokens 256: finish length", "[WARN] a short answer ran to max_tokens (256)", "→ --jinja"} {
		if !strings.Contains(out, want) {
			t.Errorf("overlay lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[2J") || !strings.Contains(out, "tiny") {
		t.Errorf("the model name reached the screen unsanitised or not at all:\n%s", out)
	}
	m.Update(press("x"))
	if out := screen(t, m, 120, 40); !strings.Contains(out, "[template] POST /apply-template → 200") {
		t.Errorf("x does not show the raw exchanges:\n%s", out)
	}
	runs := m.d.Core.RunsOf(testURL)
	if len(runs) == 0 || runs[len(runs)-1].Behaviour == nil {
		t.Fatalf("the probe did not reach the core's run: %+v", runs)
	}
	m.d.Core.Evaluate(t0.Add(31 * time.Second))
	found := false
	for _, f := range m.d.Core.Report().Findings {
		found = found || f.ID == "probe_runs_to_length"
	}
	if !found {
		t.Errorf("the diagnosis lacks the probe's finding")
	}
}

// Long and wide lines wrap within the width, none is cut.
func TestProbeWrapLine(t *testing.T) {
	l := "chat template  renders: “" + strings.Repeat("今天天气很好 ", 12) + "”"
	ws := wrapLine(l, 40)
	if len(ws) < 3 {
		t.Fatalf("%d pieces: %q", len(ws), ws)
	}
	var back string
	for i, w := range ws {
		if n := ansi.StringWidth(w); n > 40 {
			t.Errorf("piece %d is %d cells: %q", i, n, w)
		}
		if i > 0 {
			w = strings.TrimPrefix(w, "      ")
		}
		back += w
	}
	// Word wrapping may drop the space it breaks at; nothing else.
	if nospace := func(s string) string { return strings.ReplaceAll(s, " ", "") }; nospace(back) != nospace(l) {
		t.Errorf("text lost in wrapping:\n%q\n%q", back, l)
	}
}

// In a replay, o sends nothing: the recorded endpoint is not the one
// that would answer now.
func TestProbeOverlayNotInAReplay(t *testing.T) {
	called := false
	withProbeOverlay(t, func(context.Context, string, func(string)) (model.Behaviour, error) {
		called = true
		return model.Behaviour{}, nil
	})
	m := newTestModel()
	for _, s := range scrapes(5, stressed) {
		m.Update(s)
	}
	m.d.Replay = &ReplayState{}
	_, cmd := m.Update(press("o"))
	driveProbe(m, cmd)
	m.Update(press("enter"))
	if out := screen(t, m, 120, 30); called || !strings.Contains(out, "not in a replay") {
		t.Errorf("called %v:\n%s", called, out)
	}
}

// Issue 31 item 23: the raw view of a real probe wrapped each line twice
// (the wrapped remainder wrapped again), splitting numbers across lines.
// At 80 columns every piece fits, each number of the capture stays whole,
// and a line takes no more pieces than one wrap needs.
func TestProbeRawViewWrapsOnce(t *testing.T) {
	const w = 80
	num := regexp.MustCompile(`[0-9]{2,}`)
	for _, l := range ProbeRawLines(realProbe(t)) {
		ws := wrapLine(l, w)
		joined := strings.Join(ws, "\n")
		for i, p := range ws {
			if n := ansi.StringWidth(p); n > w {
				t.Errorf("piece %d is %d cells: %q", i, n, p)
			}
		}
		for _, n := range num.FindAllString(l, -1) {
			if len(n) < w-10 && !strings.Contains(joined, n) && strings.Contains(strings.ReplaceAll(joined, "\n      ", ""), n) {
				t.Errorf("number %s split across lines:\n%s", n, joined)
			}
		}
		if max := 2 + ansi.StringWidth(l)/(w-6-8); len(ws) > max {
			t.Errorf("%d pieces for a %d-cell line (at most %d): %q", len(ws), ansi.StringWidth(l), max, ws)
		}
	}
}

// A wrapped line keeps a negative number whole: ansi.Wrap broke after the
// minus of "n_predict=-1", leaving "1" alone at the start of the next line.
func TestWrapLineKeepsNegativeNumbers(t *testing.T) {
	l := "                 stop tokens: <|im_end|> (EOS) · defaults: frequency_penalty=0 ignore_eos=false min_p=0.05 n_predict=-1 presence_penalty=0 seed=-42"
	for w := 20; w < 130; w++ {
		out := wrapLine(l, w)
		for _, p := range out {
			if strings.HasSuffix(strings.TrimRight(p, " "), "=-") || ansi.StringWidth(p) > w || strings.ContainsRune(p, '\u2011') {
				t.Errorf("width %d: %q", w, out)
				break
			}
		}
		if j := strings.Join(out, "\n"); !strings.Contains(j, "n_predict=-1") || !strings.Contains(j, "seed=-42") {
			t.Errorf("width %d: a negative number split: %q", w, out)
		}
	}
}
