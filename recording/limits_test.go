package recording

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// A recording is a file from outside (issue 32): what a crafted one can
// make the reader hold is bounded, and going past a bound ends the reading
// with an error that names the record and its offset.

const hdr = `{"llmtop_recording":1,"face":"monitor","started":"2026-11-24T14:02:11Z"}` + "\n"

func tickAt(ns int64) string { return fmt.Sprintf(`{"t":%d,"k":"tick"}`+"\n", ns) }

// readErr reads every record and returns the error that ended them (nil
// at a clean end) with the records read.
func readErr(t *testing.T, b []byte) ([]Record, []string, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), "crafted.llmrec")
	if err != nil {
		return nil, nil, err
	}
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, r.Notes(), nil
		}
		if err != nil {
			if _, again := r.Next(); again == nil || again == io.EOF {
				t.Fatalf("after %v, Next read on: %v", err, again)
			}
			return out, r.Notes(), err
		}
		out = append(out, rec)
	}
}

func TestATickFloodEndsInAnErrorNamingTheOffset(t *testing.T) {
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	io.WriteString(zw, hdr)
	line := tickAt(t0.UnixNano())
	for range maxPerSecond + 10 {
		io.WriteString(zw, line)
	}
	zw.Close()
	recs, _, err := readErr(t, zb.Bytes())
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("err %v, want a *LimitError", err)
	}
	if le.Record != maxPerSecond+1 || le.Offset != int64(len(hdr)+maxPerSecond*len(line)) || len(recs) != maxPerSecond {
		t.Fatalf("stopped at record %d, byte %d with %d read: %v", le.Record, le.Offset, len(recs), err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("at byte %d", le.Offset)) || !strings.Contains(err.Error(), "crafted.llmrec") {
		t.Fatalf("error %q names neither the file nor the offset", err)
	}
}

func TestALineOverTheLimitNamesItsOffset(t *testing.T) {
	note := `{"t":` + fmt.Sprint(t0.UnixNano()) + `,"k":"note","m":{"text":"` + strings.Repeat("x", maxLine) + `"}}` + "\n"
	recs, _, err := readErr(t, gz(hdr+tickAt(t0.UnixNano())+note))
	var le *LimitError
	if !errors.As(err, &le) || le.Record != 2 || le.Offset != int64(len(hdr)+len(tickAt(t0.UnixNano()))) || len(recs) != 1 {
		t.Fatalf("err %v (%d records)", err, len(recs))
	}
	if !strings.Contains(err.Error(), "longer than 16 MiB") {
		t.Fatalf("error %q", err)
	}
	// a header line over the limit is an error too, not a crash
	if _, err := NewReader(bytes.NewReader(gz(`{"llmtop_recording":1,"llmtop":"`+strings.Repeat("v", maxLine)+`"}`+"\n")), "h.llmrec"); err == nil {
		t.Fatal("a 16 MiB header was read")
	}
}

func TestAFirstRecordFromNoClockIsAnError(t *testing.T) {
	_, _, err := readErr(t, gz(hdr+tickAt(3)))
	var le *LimitError
	if !errors.As(err, &le) || le.Record != 1 || !strings.Contains(err.Error(), "1970-01-01") {
		t.Fatalf("err %v", err)
	}
}

func TestTimesRunningBackwardsAreReportedAndHandedOutInOrder(t *testing.T) {
	ns := t0.UnixNano()
	b := gz(hdr + tickAt(ns) + tickAt(ns+int64(10*time.Second)) + tickAt(ns+int64(3*time.Second)) +
		tickAt(ns+int64(10*time.Second)-1000) + tickAt(ns+int64(11*time.Second)))
	recs, notes, err := readErr(t, b)
	if err != nil || len(recs) != 5 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	want := []time.Duration{0, 10 * time.Second, 10 * time.Second, 10 * time.Second, 11 * time.Second}
	for i, r := range recs {
		if got := r.Time.Sub(t0.Truncate(0)); got != want[i] {
			t.Errorf("record %d at +%v, want +%v", i+1, got, want[i])
		}
	}
	// the µs step back of two racing sources is not worth a note; 7 s is
	if len(notes) != 1 || !strings.Contains(notes[0], "1 records are stamped before the record ahead of them (by up to 7s)") {
		t.Fatalf("notes %q", notes)
	}
	// in order, no note
	if _, notes, _ := readErr(t, gz(hdr+tickAt(ns)+tickAt(ns+1))); len(notes) != 0 {
		t.Fatalf("notes on an ordered file: %q", notes)
	}
}

func TestAnAbsurdHeaderIsReportedAndReplaced(t *testing.T) {
	ns := t0.UnixNano()
	for _, h := range []string{
		`{"llmtop_recording":1,"face":"diagnose","started":"0001-01-01T00:00:01Z","interval":"-5s","window":"9000h"}`,
		`{"llmtop_recording":1,"face":"diagnose","started":"2262-04-11T23:47:16Z"}`,
		`{"llmtop_recording":1,"face":"diagnose","started":"2020-01-01T00:00:00Z"}`,
	} {
		r, err := NewReader(bytes.NewReader(gz(h+"\n"+tickAt(ns))), "x.llmrec")
		if err != nil {
			t.Fatal(err)
		}
		got := r.Header()
		if !got.Started.Equal(t0) {
			t.Errorf("%s: started %v, want the first record's %v", h, got.Started, t0)
		}
		if d := time.Duration(got.Interval); d < 0 {
			t.Errorf("%s: interval %v kept", h, d)
		}
		if d := time.Duration(got.Window); d > 24*time.Hour {
			t.Errorf("%s: window %v kept", h, d)
		}
		if notes := strings.Join(r.Notes(), "\n"); !strings.Contains(notes, "the header's start") {
			t.Errorf("%s: notes %q", h, notes)
		}
	}
}

func TestLongNotesAndLogLinesAreCut(t *testing.T) {
	long := strings.Repeat("é", maxLogText) // two bytes each: the cut falls inside one
	b := writeAll(t, []Record{
		{at(1), Note{Text: long}},
		{at(2), model.LogLine{Time: at(2), Text: long}},
		{at(3), model.LogLines{{Time: at(3), Text: "short"}, {Time: at(3), Text: long}}},
	})
	_, recs, notes := readAll(t, b)
	n := recs[0].Msg.(Note).Text
	l := recs[1].Msg.(model.LogLine).Text
	ls := recs[2].Msg.(model.LogLines)
	if len(n) > maxNote+len("…") || len(l) > maxLogText+len("…") || len(ls[1].Text) > maxLogText+len("…") || ls[0].Text != "short" {
		t.Fatalf("lengths %d %d %d %q", len(n), len(l), len(ls[1].Text), ls[0].Text)
	}
	if !strings.HasSuffix(l, "…") || !strings.HasPrefix(long, strings.TrimSuffix(l, "…")) {
		t.Fatalf("the cut line is not a prefix of the line ending in …")
	}
	all := strings.Join(notes, "\n")
	if !strings.Contains(all, "2 log lines longer than 16 KiB were cut") || !strings.Contains(all, "1 notes longer than 4 KiB") {
		t.Fatalf("notes %q", notes)
	}
}

func TestUnknownKindsAreCountedWithinABound(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(hdr)
	for i := range 1000 {
		fmt.Fprintf(&sb, `{"t":%d,"k":"kind%d"}`+"\n", t0.UnixNano(), i)
	}
	sb.WriteString(tickAt(t0.UnixNano()))
	r, err := NewReader(bytes.NewReader(gz(sb.String())), "k.llmrec")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	if len(r.unknown) > maxKinds {
		t.Fatalf("%d kinds held", len(r.unknown))
	}
	if notes := strings.Join(r.Notes(), "\n"); !strings.Contains(notes, fmt.Sprintf("%d of other kinds", 1000-maxKinds)) {
		t.Fatalf("notes %q", notes)
	}
}
