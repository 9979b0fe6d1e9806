package main

import (
	"os"
	"testing"
)

// Two snapshots in one second (s pressed twice, or s, a seek and s again
// in a replay) are two files: the second overwrote the first, whose name
// has the second's wall-clock second only.
func TestSaveSnapshotKeepsEarlierOnes(t *testing.T) {
	t.Chdir(t.TempDir())
	seen := map[string]string{}
	for _, body := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		name, err := saveSnapshot([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[name]; ok {
			t.Fatalf("%s written twice (%s, then %s)", name, prev, body)
		}
		seen[name] = body
	}
	for name, body := range seen {
		if b, err := os.ReadFile(name); err != nil || string(b) != body {
			t.Errorf("%s holds %q (%v), want %q", name, b, err, body)
		}
	}
}
