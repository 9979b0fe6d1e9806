package probe

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A body of known length (announced, or the last answer's) is read into
// one buffer, not one grown from 512 bytes (a 50 KB vLLM scrape allocated
// 124 KB a second that way); the length is a hint, never trusted.
func TestReadBodyIntoOneBuffer(t *testing.T) {
	body := bytes.Repeat([]byte("vllm:num_requests_running{engine=\"0\"} 1\n"), 1300) // ~53 KB
	n := int64(len(body))
	// The race detector adds allocations of its own (make test runs with
	// -race): one more is allowed there.
	want := 3.0
	if raceEnabled {
		want++
	}
	known := testing.AllocsPerRun(20, func() { _, _ = readBody(bytes.NewReader(body), 1<<20, n, nil) })
	if known > want {
		t.Errorf("a body of known length took %.0f allocations, want %.0f (the buffer, its header, the limit)", known, want)
	}
	if a := testing.AllocsPerRun(20, func() { _, _ = readBody(bytes.NewReader(body), 1<<20, -1, nil) }); a < known+5 {
		t.Errorf("an unknown length took %.0f allocations: the test no longer shows the growth it avoids", a)
	}
	for _, c := range []struct {
		name  string
		size  int64
		limit int64
	}{
		{"exact", n, 1 << 20},
		{"hint too small", n / 3, 1 << 20},
		{"hint too large", 4 * n, 1 << 20},
		{"hint over the cap", 2 << 20, 1 << 20},
		{"unknown", -1, 1 << 20},
	} {
		got, err := readBody(bytes.NewReader(body), c.limit, c.size, nil)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s: %d bytes, err %v; want the %d bytes", c.name, len(got), err, n)
		}
	}
	// the cap still holds whatever the hint says: limit+1 bytes read, so
	// the caller sees a body over it
	for _, hint := range []int64{-1, 10, n} {
		if got, _ := readBody(bytes.NewReader(body), 100, hint, nil); len(got) != 101 {
			t.Errorf("hint %d: read %d bytes of a body over a 100-byte cap, want 101", hint, len(got))
		}
	}
}

// GetSized reads chunked bodies (no Content-Length) and announced ones
// alike, under the same cap.
func TestGetSizedChunkedAndAnnounced(t *testing.T) {
	body := strings.Repeat("x", 70_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/announced" {
			w.Header().Set("Content-Length", "70000")
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/chunked", "/announced"} {
		for _, hint := range []int64{-1, 1000, 70_000, 500_000} {
			got, _, err := GetSized(t.Context(), srv.Client(), srv.URL+path, "", 1<<20, hint)
			if err != nil || string(got) != body {
				t.Errorf("%s hint %d: %d bytes, err %v", path, hint, len(got), err)
			}
			_, _, err = GetSized(t.Context(), srv.Client(), srv.URL+path, "", 1000, hint)
			var tl *TooLargeError
			if !errors.As(err, &tl) {
				t.Errorf("%s hint %d: a body over the cap gave %v, want *TooLargeError", path, hint, err)
			}
		}
	}
}
