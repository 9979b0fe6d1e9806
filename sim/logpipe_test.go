package sim

import (
	"io"
	"strings"
	"testing"
)

func TestLogPipeNeverBlocksAndKeepsWholeLines(t *testing.T) {
	p := NewLogPipe(4096)
	line := strings.Repeat("x", 99) + "\n"
	for i := 0; i < 1000; i++ { // 100 KB into a 4 KiB pipe, nobody reading
		if _, err := p.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	got, err := io.ReadAll(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 4096 || len(got)%100 != 0 || !strings.HasPrefix(string(got), line) {
		t.Errorf("kept %d bytes, want whole lines within 4096", len(got))
	}
	if p.Dropped != int64(100000-len(got)) {
		t.Errorf("dropped %d, want %d", p.Dropped, 100000-len(got))
	}
	if _, err := p.Write([]byte("late\n")); err == nil {
		t.Error("write after close succeeded")
	}
}
