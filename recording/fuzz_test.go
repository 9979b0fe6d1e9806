package recording

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"reflect"
	"testing"
)

// FuzzReader feeds the reader crafted recordings (the uncompressed lines;
// the fuzzer gzips them) and checks what it hands out, not only that it
// does not panic: every record stamped at a real time, none earlier than
// the one before, of a kind the core takes, its text already cleaned and
// within the caps; an error that ends the records names an offset inside
// the input; and what it read is a fixed point of the format: written
// again and read back, it writes the same bytes.
func FuzzReader(f *testing.F) {
	var seed bytes.Buffer
	zr, err := gzip.NewReader(bytes.NewReader(writeAllF(f, allMessages())))
	if err != nil {
		f.Fatal(err)
	}
	io.Copy(&seed, zr)
	f.Add(seed.Bytes())
	f.Add([]byte(hdr + tickAt(t0.UnixNano()) + tickAt(t0.UnixNano()-5e9) + `{"t":1,"k":"note","m":{"text":"\u001b]0;x\u0007"}}` + "\n"))
	f.Add([]byte(`{"llmtop_recording":1,"started":"0001-01-01T00:00:00Z","interval":"-1s"}` + "\n" + tickAt(t0.UnixNano())))
	f.Fuzz(func(t *testing.T, body []byte) {
		h, recs, err := readBody(body)
		if err != nil {
			var le *LimitError
			if errors.As(err, &le) && (le.Offset < 0 || le.Offset > int64(len(body)) || le.Record < 1) {
				t.Fatalf("limit error outside the input (%d bytes): %v", len(body), err)
			}
			if h == nil {
				return
			}
		}
		for i, r := range recs {
			if !plausible(r.Time) || (i > 0 && r.Time.Before(recs[i-1].Time)) {
				t.Fatalf("record %d at %v (before: %v)", i, r.Time, recs[max(i-1, 0)].Time)
			}
			if _, ok := r.Msg.(Note); !ok && !known(r.Msg) {
				t.Fatalf("record %d: a %T", i, r.Msg)
			}
			if c := cleaned(r.Msg); !reflect.DeepEqual(c, r.Msg) && !hasNaN(r.Msg) {
				t.Fatalf("record %d was handed out uncleaned: %#v", i, r.Msg)
			}
			if n, ok := r.Msg.(Note); ok && len(n.Text) > maxNote+len("…") {
				t.Fatalf("a %d-byte note", len(n.Text))
			}
		}
		if len(recs) == 0 {
			return
		}
		once := rewrite(t, *h, recs)
		h2, recs2, err := readBody(once)
		if err != nil || h2 == nil {
			t.Fatalf("what the writer wrote does not read back: %v", err)
		}
		if twice := rewrite(t, *h2, recs2); !bytes.Equal(once, twice) {
			t.Fatalf("written again, the records changed:\n%s\n%s", once, twice)
		}
	})
}

// known says msg is one of the types encode writes.
func known(msg any) bool {
	_, _, ok := encode(msg)
	return ok
}

// hasNaN: DeepEqual never finds a NaN equal to itself.
func hasNaN(msg any) bool {
	b, _ := encodeLine(msg)
	return bytes.Contains(b, []byte(`"NaN"`))
}

func encodeLine(msg any) ([]byte, error) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{})
	if err != nil {
		return nil, err
	}
	w.Write(t0, msg)
	w.Close()
	return buf.Bytes(), nil
}

func readBody(body []byte) (*Header, []Record, error) {
	r, err := NewReader(bytes.NewReader(gz(string(body))), "fuzz.llmrec")
	if err != nil {
		return nil, nil, err
	}
	h := r.Header()
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return &h, out, nil
		}
		if err != nil {
			return &h, out, err
		}
		out = append(out, rec)
	}
}

// rewrite writes recs under h and returns the file's uncompressed lines.
func rewrite(t *testing.T, h Header, recs []Record) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := w.Write(r.Time, r.Msg); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeAllF(f *testing.F, recs []Record) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Llmtop: "test", Face: "monitor", Started: t0})
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range recs {
		w.Write(r.Time, r.Msg)
	}
	w.Close()
	return buf.Bytes()
}
