package tui

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// syncBuf is a terminal that never answers a query.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestProgramRunsOnMessages runs the real tea.Program on a terminal that
// answers nothing: data sent from another goroutine reaches the model, the
// screen is drawn, q ends it. A stall on a terminal query would hang here.
func TestProgramRunsOnMessages(t *testing.T) {
	out := &syncBuf{}
	m := New(Options{Endpoints: []string{testURL}, Now: t0, Theme: "auto"})
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(120, 40),
		tea.WithColorProfile(colorprofile.ANSI256), tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	go func() {
		for _, s := range scrapes(5, healthy) {
			p.Send(s)
		}
		p.Send(gpus(2, t0.Add(4*time.Second), false))
		p.Send(press("q"))
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		p.Kill()
		t.Fatal("the program did not finish: a stall at start-up or in Update")
	}
	if got := m.d.Info(testURL); got == nil || got.Scrapes != 5 {
		t.Fatalf("scrapes reached the model: %+v", got)
	}
	if m.d.GPU() == nil || len(m.d.GPU().GPUs) != 2 {
		t.Fatal("the GPU snapshot did not reach the model")
	}
	if !strings.Contains(out.String(), "llmtop") {
		t.Fatal("nothing was drawn")
	}
}
