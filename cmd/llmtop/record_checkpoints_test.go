package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
)

// recordSimWithCheckpoints records the simulator through scenario for
// steps seconds as the monitor's recorder does (a checkpoint every
// minute of recorded time when h names them), into a file.
func recordSimWithCheckpoints(t *testing.T, scenario string, steps int, mk func(recording.Header) recording.Header, shadowed func(*recording.Writer, recording.Header)) string {
	t.Helper()
	old := checkpointEvery
	checkpointEvery = time.Minute
	defer func() { checkpointEvery = old }()
	ss := newSimSession(t, scenario)
	h := mk(recording.Header{Face: "monitor", Started: ss.clk.Now(), Endpoints: []string{ss.url},
		Interval: recording.Duration(time.Second), Window: recording.Duration(time.Minute)})
	path := filepath.Join(t.TempDir(), "cp.llmrec")
	w, err := recording.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	shadowed(w, h)
	for range steps {
		at, msgs := ss.step(t)
		for _, m := range msgs {
			if _, err := w.Write(at, m); err != nil {
				t.Fatal(err)
			}
		}
		w.Write(at, recording.Tick{})
		w.Flush()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// judgeFull is `diagnose --from` reading the whole recording.
func judgeFull(t *testing.T, path string) (string, []string) {
	t.Helper()
	r, err := readStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := judgeRecording(r.Header(), r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	return string(b), r.Notes()
}

// judgeResumed is `diagnose --from` as it runs: from the last checkpoint
// it can use; what it said on stderr.
func judgeResumed(t *testing.T, path string) (string, []string, *resumed, string) {
	t.Helper()
	var errOut bytes.Buffer
	r, from, err := resumeRecording(&errOut, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := judgeRecording(r.Header(), r, from)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	return string(b), r.Notes(), from, errOut.String()
}

const checkpointScenario = "healthy:1m,queue-buildup:2m,kv-pressure:2m,crash-restart:2m,healthy"

// Issue 33: `diagnose --from` on a recording with checkpoints starts from
// the last one and reaches the verdict the whole replay reaches — the
// open findings with their times, the closed ones, the runs — whole or
// cut by a crash.
func TestDiagnoseFromCheckpointEqualsFullReplay(t *testing.T) {
	path := recordSimWithCheckpoints(t, checkpointScenario, 8*60+20, checkpointed, shadow)
	want, wantNotes := judgeFull(t, path)
	got, notes, from, said := judgeResumed(t, path)
	if from == nil || from.records < 1000 || said != "" {
		t.Fatalf("not resumed from a late checkpoint: %+v, said %q", from, said)
	}
	if got != want {
		t.Fatalf("from the checkpoint:\n%s\nwhole replay:\n%s", got, want)
	}
	if strings.Join(notes, "|") != strings.Join(wantNotes, "|") {
		t.Fatalf("notes %q, whole replay's %q", notes, wantNotes)
	}
	var res diagnoseResult
	json.Unmarshal([]byte(got), &res)
	if len(res.Closed) == 0 || len(res.Endpoints) != 1 || len(res.Endpoints[0].Runs) < 2 {
		t.Fatalf("the recording judged nothing worth comparing: %s", got)
	}

	b, _ := os.ReadFile(path)
	torn := filepath.Join(t.TempDir(), "torn.llmrec")
	os.WriteFile(torn, b[:len(b)-100], 0o600)
	want, wantNotes = judgeFull(t, torn)
	got, notes, from, _ = judgeResumed(t, torn)
	if from == nil || got != want || strings.Join(notes, "|") != strings.Join(wantNotes, "|") || len(notes) == 0 {
		t.Fatalf("torn: resumed %v\n%s %q\nwhole replay:\n%s %q", from != nil, got, notes, want, wantNotes)
	}
}

// A recording without checkpoints (an older llmtop's), one whose
// checkpoints another build wrote, and one whose checkpoint does not
// decode are judged from their start, the same verdict, and say why.
func TestDiagnoseFromWithoutUsableCheckpointsSaysSo(t *testing.T) {
	for _, c := range []struct {
		name, said string
		mk         func(recording.Header) recording.Header
		shadowed   func(*recording.Writer, recording.Header)
	}{
		{"old", "holds no checkpoints", func(h recording.Header) recording.Header { return h }, func(*recording.Writer, recording.Header) {}},
		{"other build", "another llmtop build", func(h recording.Header) recording.Header {
			h = checkpointed(h)
			h.Checkpoints.Build = "another"
			return h
		}, func(w *recording.Writer, h recording.Header) {
			w.SetShadow(func(h recording.Header) recording.Shadow { return &coreShadow{mon: session.ReplayCore(h)} })
		}},
		{"unreadable", "could not be read", checkpointed, func(w *recording.Writer, h recording.Header) {
			w.SetShadow(func(h recording.Header) recording.Shadow { return junkShadow{} })
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := recordSimWithCheckpoints(t, "healthy:1m,crash-restart:1m,healthy", 150, c.mk, c.shadowed)
			want, _ := judgeFull(t, path)
			got, _, from, said := judgeResumed(t, path)
			if from != nil || got != want || !strings.Contains(said, c.said) || !strings.Contains(said, "judged from its start") {
				t.Fatalf("resumed %v, said %q\n%s\nwhole replay:\n%s", from != nil, said, got, want)
			}
		})
	}
}

type junkShadow struct{}

func (junkShadow) Feed(recording.Record)  {}
func (junkShadow) State() ([]byte, error) { return []byte("not a core"), nil }

// snapshot --from --at starts from the newest checkpoint at or before the
// moment (a day's snapshot at its end took a minute of CPU from the start)
// and says what the replay from the start says, at moments before the
// first checkpoint, between two, and at the end.
func TestSnapshotFromCheckpointEqualsFullReplay(t *testing.T) {
	path := recordSimWithCheckpoints(t, checkpointScenario, 8*60+20, checkpointed, shadow)
	doc := func(mon *core.Monitor) any {
		d := mon.Snapshot()
		d.GPU = mon.GPU()
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		json.Unmarshal(b, &v)
		return v
	}
	for _, c := range []struct {
		at     string
		resume bool
	}{{"+30s", false}, {"+3m30s", true}, {"+5m", true}, {"+7m59s", true}, {"", true}} {
		r, err := readStream(path)
		if err != nil {
			t.Fatal(err)
		}
		want, wantAt, err := replayUntil(r.Header(), r, c.at, nil)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		r, from, err := resumeAt(path, c.at)
		if err != nil {
			t.Fatal(err)
		}
		if (from != nil) != c.resume || from != nil && (from.last.After(wantAt) || wantAt.Sub(from.last) > 65*time.Second) {
			t.Fatalf("--at %q (%s): resumed from %+v", c.at, wantAt, from)
		}
		got, gotAt, err := replayUntil(r.Header(), r, c.at, from)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !gotAt.Equal(wantAt) || !reflect.DeepEqual(doc(got), doc(want)) {
			t.Fatalf("--at %q: from the checkpoint at %s (%s):\n%v\nfrom the start (%s):\n%v", c.at, from.last, gotAt, doc(got), wantAt, doc(want))
		}
	}
	// past the end: the recording's span, as from the start
	var out, errOut bytes.Buffer
	if err := snapshotFrom(&out, &errOut, path, "+9h", true); err == nil || !strings.Contains(err.Error(), "outside the recording") {
		t.Fatalf("--at past the end: %v", err)
	}
}
