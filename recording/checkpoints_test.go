package recording

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// countShadow's state is how many records it was fed and the newest time.
type countShadow struct {
	n    int
	last time.Time
}

func (s *countShadow) Feed(r Record) { s.n, s.last = s.n+1, r.Time }
func (s *countShadow) State() ([]byte, error) {
	return []byte(strconv.Itoa(s.n) + " " + s.last.Format(time.RFC3339Nano)), nil
}

// A Writer's checkpoint holds its shadow as the records before it left it
// (times the reader moves back included), and Resume's Reader hands out
// exactly the records after it, as reading the whole file would.
func TestResumeReadsOnFromTheLastCheckpoint(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	h := Header{Face: "monitor", Started: t0, Checkpoints: &Checkpoints{Build: "b1", Every: Duration(time.Minute)}}
	path := filepath.Join(t.TempDir(), "r.llmrec")
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	var sh *countShadow
	if err := w.SetShadow(func(Header) Shadow { sh = &countShadow{}; return sh }); err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		at := t0.Add(time.Duration(i) * time.Second)
		if i%50 == 7 {
			at = at.Add(-3 * time.Second) // stamped before the one ahead: read at its time
		}
		w.Write(at, Note{Text: "x" + strconv.Itoa(i)})
		w.Write(at, Tick{})
	}
	w.Close()

	_, all, wantNotes, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, from, why, err := Resume(path, "b1")
	if err != nil || from == nil || why != "" {
		t.Fatalf("resume: %v %v %q", from, err, why)
	}
	defer r.Close()
	// the last checkpoint is due at 6 min in: 361 seconds of 2 records
	if from.Records < 700 || from.Records >= len(all) || string(from.State) != strconv.Itoa(from.Records)+" "+from.Last.Format(time.RFC3339Nano) ||
		!from.Last.Equal(all[from.Records-1].Time) {
		t.Fatalf("checkpoint after %d records at %s, state %q", from.Records, from.Last, from.State)
	}
	var rest []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rest = append(rest, rec)
	}
	if len(rest) != len(all)-from.Records {
		t.Fatalf("%d records after the checkpoint, want %d", len(rest), len(all)-from.Records)
	}
	for i, rec := range rest {
		if want := all[from.Records+i]; !rec.Time.Equal(want.Time) || rec.Msg != want.Msg {
			t.Fatalf("record %d: %v, whole file %v", from.Records+i, rec, want)
		}
	}
	if got := r.Notes(); len(got) != len(wantNotes) || len(got) > 0 && got[0] != wantNotes[0] {
		t.Fatalf("notes %q, whole file %q", got, wantNotes)
	}

	// another build's, or none: from the start, saying why
	for build, say := range map[string]string{"b2": "another llmtop build"} {
		r, from, why, err := Resume(path, build)
		if err != nil || from != nil || !bytes.Contains([]byte(why), []byte(say)) {
			t.Fatalf("build %s: %v %q %v", build, from, why, err)
		}
		if rec, _ := r.Next(); !rec.Time.Equal(all[0].Time) {
			t.Fatalf("build %s: not read from the start", build)
		}
		r.Close()
	}
	if len(wantNotes) != 1 { // the checkpoints are no records: skipped without a word
		t.Fatalf("whole-file notes %q (want only the times moved back)", wantNotes)
	}
}

// A file whose checkpoints start no gzip member of their own (the same
// lines in one member: recompressed by a tool) is read through for its
// last checkpoint line, to the same records.
func TestResumeWithoutMarkedMembersReadsThrough(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	h := Header{Face: "monitor", Started: t0, Checkpoints: &Checkpoints{Build: "b1", Every: Duration(time.Minute)}}
	dir := t.TempDir()
	path := filepath.Join(dir, "r.llmrec")
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	w.SetShadow(func(Header) Shadow { return &countShadow{} })
	for i := range 300 {
		w.Write(t0.Add(time.Duration(i)*time.Second), Note{Text: "x" + strconv.Itoa(i)})
	}
	w.Close()
	raw, _ := os.ReadFile(path)
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	var one bytes.Buffer
	zw := gzip.NewWriter(&one)
	zw.Write(plain)
	zw.Close()
	if bytes.Contains(one.Bytes(), []byte(memberMark)) || !bytes.Contains(raw, []byte(memberMark)) {
		t.Fatal("the marks are not where the test wants them")
	}
	single := filepath.Join(dir, "one.llmrec")
	os.WriteFile(single, one.Bytes(), 0o600)
	var got [2][]string
	for i, p := range []string{path, single} {
		r, from, why, err := Resume(p, "b1")
		if err != nil || from == nil || why != "" {
			t.Fatalf("%s: %v %q %v", p, from, why, err)
		}
		got[i] = append(got[i], string(from.State))
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			got[i] = append(got[i], rec.Msg.(Note).Text)
		}
		r.Close()
	}
	if strings.Join(got[0], ",") != strings.Join(got[1], ",") || len(got[0]) < 2 {
		t.Fatalf("marked members %q\nread through %q", got[0], got[1])
	}
}
