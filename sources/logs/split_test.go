package logs

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

func TestSplitter(t *testing.T) {
	var got []string
	emit := func(b []byte) { got = append(got, string(b)) }
	sp := newSplitter()
	sp.write([]byte("a\nb"), emit)
	sp.write([]byte("c\n\nd"), emit)
	sp.flush(emit)
	if strings.Join(got, "|") != "a|bc||d" {
		t.Errorf("%q", got)
	}
}

// A line longer than maxLine is kept up to maxLine and the rest skipped up
// to its newline; the next line is intact.
func TestSplitterCapsHugeLines(t *testing.T) {
	var got []string
	emit := func(b []byte) { got = append(got, string(b)) }
	sp := newSplitter()
	chunk := []byte(strings.Repeat("x", 64<<10))
	for i := 0; i < 48; i++ { // 3 MiB without a newline
		sp.write(chunk, emit)
	}
	sp.write([]byte("tail\nnext\n"), emit)
	if len(got) != 2 || len(got[0]) != maxLine || got[1] != "next" {
		t.Fatalf("%d lines, first %d bytes, second %q", len(got), len(got[0]), got[len(got)-1])
	}
}

// The error at the end of a long line is matched, though the line shown
// is cut.
func TestLongLineMatchedWholeShownCut(t *testing.T) {
	src := NewSource(Options{}, func(any) {})
	line := strings.Repeat("context ", 2000) + "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free."
	src.Line([]byte(line))
	ll, ok := src.queue[0].(model.LogLine)
	if !ok || ll.Event == nil || ll.Event.Kind != "torch_cuda_oom" || ll.Event.Fields["tried"] != "2.00 GiB" {
		t.Fatalf("not matched: %+v", src.queue[0])
	}
	if len(ll.Text) > 1100 || !strings.Contains(ll.Text, "more bytes]") {
		t.Errorf("shown text of %d bytes: %q…", len(ll.Text), ll.Text[:40])
	}
	if len(ll.Event.Line) > maxEventLine+40 || !strings.Contains(ll.Event.Line, "CUDA out of memory. Tried") || !strings.HasPrefix(ll.Event.Line, "… ") {
		t.Errorf("event line of %d bytes does not show the message: %q", len(ll.Event.Line), ll.Event.Line)
	}
}
