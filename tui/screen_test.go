package tui

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// A terminal emulator fed what Screen writes shows exactly the frames
// handed in, whatever changed between them: lines that stayed, lines that
// changed, a frame that got shorter, a resize.
func TestScreenDrawsFramesOnAnEmulator(t *testing.T) {
	const w, h = 20, 4
	term := vt.NewEmulator(w, h)
	s := NewScreen(term)
	s.Resize(w)
	frames := [][]string{
		{"llmtop  UP         ", "\x1b[31mred\x1b[0m line        ", "third               ", "fourth ▁▂▃ → ok     "},
		{"llmtop  UP         ", "\x1b[31mred\x1b[0m line        ", "3rd changed         ", "fourth ▁▂▃ → ok     "},
		{"too small", "short"},
	}
	for _, f := range frames {
		b := s.paint(strings.Join(f, "\n"), w, false)
		if _, err := term.Write(b); err != nil {
			t.Fatal(err)
		}
		for y := 0; y < h; y++ {
			want := ""
			if y < len(f) {
				want = ansi.Strip(f[y])
			}
			if got := strings.TrimRight(lineOf(term, y, w), " "); got != strings.TrimRight(want, " ") {
				t.Fatalf("row %d: %q, want %q", y, got, want)
			}
		}
	}
}

func lineOf(term *vt.Emulator, y, w int) string {
	var b strings.Builder
	for x := 0; x < w; x++ {
		if c := term.CellAt(x, y); c != nil && c.Content != "" {
			b.WriteString(c.Content)
		} else if c == nil || c.Width > 0 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// Only changed lines are written: a frame where one line changed costs
// that line, and the same frame again costs nothing.
func TestScreenWritesOnlyChangedLines(t *testing.T) {
	s := NewScreen(nil)
	a := strings.Repeat("a", 40) + "\n" + strings.Repeat("b", 40) + "\n" + strings.Repeat("c", 40)
	first := len(s.paint(a, 40, false))
	b := strings.Replace(a, "bbbb", "BBBB", 1)
	second := s.paint(b, 40, false)
	if bytes.Contains(second, []byte("aaaa")) || bytes.Contains(second, []byte("cccc")) || !bytes.Contains(second, []byte("BBBB")) {
		t.Fatalf("second frame wrote %q", second)
	}
	if len(second) >= first/2 {
		t.Fatalf("one changed line cost %d bytes of a %d-byte frame", len(second), first)
	}
	if again := s.paint(b, 40, false); again != nil {
		t.Fatalf("an unchanged frame wrote %q", again)
	}
	if full := s.paint(b, 40, true); !bytes.Contains(full, []byte("aaaa")) || !bytes.Contains(full, []byte("\x1b[2J")) {
		t.Fatalf("a repaint after a resize did not redraw everything: %q", full)
	}
}

// A full-width line is not followed by an erase (at the margin it would
// erase the line's last character); a shorter one is.
func TestScreenEraseOnlyShortLines(t *testing.T) {
	s := NewScreen(nil)
	b := string(s.paint("12345\n12", 5, false))
	if strings.Contains(b, "12345\x1b[0m\x1b[K") || !strings.Contains(b, "12\x1b[0m\x1b[K") {
		t.Fatalf("%q", b)
	}
}

// blockingWriter stands for a terminal that stopped reading.
type blockingWriter struct {
	mu      sync.Mutex
	release chan struct{}
	writes  []string
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	w.writes = append(w.writes, string(p))
	w.mu.Unlock()
	return len(p), nil
}

// A terminal that stops reading never blocks Show (the monitor goes on),
// and when it reads again only the newest frame is written.
func TestScreenShowNeverBlocks(t *testing.T) {
	bw := &blockingWriter{release: make(chan struct{})}
	s := NewScreen(bw)
	go s.Run()
	done := make(chan struct{})
	go func() {
		for i := 0; i < 1000; i++ {
			s.Show("frame " + strings.Repeat("x", i%7) + string(rune('a'+i%26)))
		}
		s.Show("the last frame")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Show blocked on a terminal that does not read")
	}
	close(bw.release)
	s.Close()
	bw.mu.Lock()
	defer bw.mu.Unlock()
	if len(bw.writes) > 3 {
		t.Errorf("%d writes for 1001 frames shown while the terminal was stuck", len(bw.writes))
	}
	if last := bw.writes[len(bw.writes)-1]; !strings.Contains(last, "the last frame") {
		t.Errorf("last write %q, want the newest frame", last)
	}
}
