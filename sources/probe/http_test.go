package probe

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A server that gzips a body the client did not ask to be compressed (a
// loopback scrape asks for none; a proxy may compress anyway) is read as
// the client would read an asked-for one: decompressed, under the same cap,
// so a gzip bomb is still stopped at the limit.
func TestGetReadsUnaskedGzipUnderTheCap(t *testing.T) {
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		w, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	small := []byte("vllm:num_requests_running 3\n")
	bomb := gz(bytes.Repeat([]byte("0"), 4<<20))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		if r.URL.Path == "/bomb" {
			w.Write(bomb)
			return
		}
		w.Write(gz(small))
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	body, _, err := Get(context.Background(), client, srv.URL+"/metrics", "", 1<<20)
	if err != nil || !bytes.Equal(body, small) {
		t.Fatalf("unasked gzip: %q, %v; want %q", body, err, small)
	}
	var tl *TooLargeError
	if _, _, err := Get(context.Background(), client, srv.URL+"/bomb", "", 1<<20); !errors.As(err, &tl) {
		t.Fatalf("a 4 MiB bomb under a 1 MiB cap: %v, want a TooLargeError", err)
	}
	if len(bomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed: it must be under the cap to prove anything", len(bomb))
	}
}
