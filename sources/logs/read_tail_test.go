package logs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func tailObs(msgs []any) int {
	n := 0
	for _, m := range msgs {
		if sm, ok := m.(model.Sample); ok {
			n += len(sm.Observations)
		}
	}
	return n
}

func TestReadTail(t *testing.T) {
	const path = "testdata/loglat/llama-server-2slots-6streams.log"
	at := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Microsecond); return at }
	msgs, err := ReadTail(path, 0, Options{Endpoint: "http://e", Now: clock})
	if err != nil || tailObs(msgs) != 6 {
		t.Fatalf("whole file: %d requests, %v; want 6", tailObs(msgs), err)
	}
	// The last 1 KiB holds the end of the log: fewer requests, and the cut
	// first line is not read as a line.
	msgs, err = ReadTail(path, 1024, Options{Endpoint: "http://e", Now: clock})
	if err != nil || tailObs(msgs) >= 6 {
		t.Fatalf("tail: %d requests, %v; want fewer than 6", tailObs(msgs), err)
	}
	raw, _ := os.ReadFile(path)
	cut := string(raw[len(raw)-1024:])
	partial := cut[:strings.IndexByte(cut, '\n')]
	var texts []string
	for _, m := range msgs {
		switch v := m.(type) {
		case model.LogLine:
			texts = append(texts, v.Text)
		case model.LogLines:
			for _, l := range v {
				texts = append(texts, l.Text)
			}
		}
	}
	if len(texts) == 0 || texts[0] == partial || !strings.HasSuffix(string(raw), texts[len(texts)-1]+"\n") {
		t.Errorf("lines %q: want the tail's whole lines, not the cut %q", texts, partial)
	}
	for _, bad := range []string{filepath.Join(t.TempDir(), "missing.log"), t.TempDir()} {
		if _, err := ReadTail(bad, 0, Options{}); err == nil || !strings.HasPrefix(err.Error(), "--log ") {
			t.Errorf("%s: %v, want an error naming --log", bad, err)
		}
	}
}
