package probe

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// maxProbeBody caps what a probe reads: identity routes answer a few KB
// (SGLang's /server_info is the largest, tens of KB).
const maxProbeBody = 4 << 20

// HTTPError is an answer with a non-2xx status.
type HTTPError struct {
	URL    string
	Status int
	// Body is the start of the answer, for messages ("Loading model").
	Body string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("%s answered %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if b := strings.TrimSpace(e.Body); b != "" {
		msg += ": " + oneLine(b, 120)
	}
	return msg
}

// TooLargeError is a body over the read cap.
type TooLargeError struct {
	URL   string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s answered more than %d bytes; stopped reading", e.URL, e.Limit)
}

// DecodeError is an answer that is not the JSON expected.
type DecodeError struct {
	URL string
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: not the JSON expected: %v", e.URL, e.Err)
}

// StalledError is an answer whose status and headers came but whose body
// stopped before its end, until the request's time ran out: the server
// answered, then hung (an exporter stuck mid-scrape, a proxy holding the
// body), which is not the same as no answer at all.
type StalledError struct {
	URL    string
	Status int
	Got    int // body bytes read before it stalled
	Err    error
}

func (e *StalledError) Error() string {
	return fmt.Sprintf("%s answered %d, then its body stalled after %d bytes (%v)", e.URL, e.Status, e.Got, e.Err)
}

func (e *StalledError) Unwrap() error { return e.Err }

// RedirectError is a redirect that was not followed: one that comes back
// to a URL already visited (a loop), one too many, or, unless asked for,
// one to another host.
type RedirectError struct {
	From, To string
	Why      string // "loop", "too many" or "another host"
}

func (e *RedirectError) Error() string { return e.From + " " + e.What() }

// What is the error without the URL first asked: "redirects in a loop
// (back to …)".
func (e *RedirectError) What() string {
	switch e.Why {
	case "loop":
		return "redirects in a loop (back to " + e.To + ")"
	case "another host":
		return "redirects to another host, " + e.To + ": not followed"
	}
	return fmt.Sprintf("redirects more than %d times (last to %s)", maxRedirects, e.To)
}

// maxRedirects is how many redirects a request follows, as net/http's
// default.
const maxRedirects = 10

// CheckRedirect is the redirect policy of llmtop's HTTP clients
// (http.Client.CheckRedirect): redirects are followed on the first
// request's host (any port), and to another host only when anyHost is set;
// a loop or more than 10 redirects stop with a *RedirectError. Credentials
// are a separate matter: they are only ever sent to the endpoint's own
// host and port.
func CheckRedirect(anyHost bool) func(req *http.Request, via []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		to := req.URL.String()
		for _, v := range via {
			if v.URL.String() == to {
				return &RedirectError{From: first.String(), To: to, Why: "loop"}
			}
		}
		if len(via) >= maxRedirects {
			return &RedirectError{From: first.String(), To: to, Why: "too many"}
		}
		if !anyHost && !strings.EqualFold(req.URL.Hostname(), first.Hostname()) {
			return &RedirectError{From: first.String(), To: to, Why: "another host"}
		}
		return nil
	}
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// Get fetches url with a read cap. A non-2xx answer is an *HTTPError, a body
// over limit a *TooLargeError; transport errors are returned as the client
// gives them (the caller classifies them).
func Get(ctx context.Context, client *http.Client, url, accept string, limit int64) ([]byte, http.Header, error) {
	return GetSized(ctx, client, url, accept, limit, -1)
}

// GetSized is Get with the body's likely length (the last answer's; <= 0:
// unknown) where the server does not announce it: the body is read into
// one buffer of that size instead of one grown from 512 bytes.
func GetSized(ctx context.Context, client *http.Client, url, accept string, limit, hint int64) ([]byte, http.Header, error) {
	return GetInto(ctx, client, url, accept, limit, hint, nil)
}

// GetInto is GetSized reading the body into buf's array where it fits (a
// buffer the caller no longer reads: the last scrape's body, once parsed),
// so a steady scrape allocates no body.
func GetInto(ctx context.Context, client *http.Client, url, accept string, limit, hint int64, buf []byte) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if !resp.Uncompressed && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		// gzip the client did not ask for (a loopback scrape is asked for
		// uncompressed; a proxy may compress anyway): read it as the client
		// would have, under the same cap, so a bomb is still stopped.
		zr, zerr := gzip.NewReader(resp.Body)
		if zerr != nil {
			return nil, resp.Header, &DecodeError{URL: url, Err: fmt.Errorf("gzip body: %v", zerr)}
		}
		defer zr.Close()
		r = zr
	}
	size := sizeOf(resp, r)
	if size < 0 {
		size = hint
	}
	body, err := readBody(r, limit, size, buf)
	if err != nil {
		if isTimeout(err) {
			return nil, resp.Header, &StalledError{URL: url, Status: resp.StatusCode, Got: len(body), Err: err}
		}
		return nil, resp.Header, err
	}
	if int64(len(body)) > limit {
		return nil, resp.Header, &TooLargeError{URL: url, Limit: limit}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		head := body
		if len(head) > 512 {
			head = head[:512]
		}
		return body, resp.Header, &HTTPError{URL: url, Status: resp.StatusCode, Body: string(head)}
	}
	return body, resp.Header, nil
}

// sizeOf is the body's announced length where it is the bytes read (not
// gzip the transport did not undo), else -1 (unknown).
func sizeOf(resp *http.Response, r io.Reader) int64 {
	if r != resp.Body {
		return -1
	}
	return resp.ContentLength
}

// readBody reads at most limit+1 bytes of r (one more than the cap, so a
// body over it is seen). A body whose length is known (announced, or the
// last one's) is read into one buffer of that size: io.ReadAll grows from
// 512 bytes, which for a vLLM scrape of 50 KB allocated 124 KB a second, a
// third of the scrape's allocation. The size is only a hint: a body longer
// or shorter reads the same. buf's array is read into where it has that
// room.
func readBody(r io.Reader, limit, size int64, buf []byte) ([]byte, error) {
	if size <= 0 || size > limit {
		return io.ReadAll(io.LimitReader(r, limit+1))
	}
	b := bytes.NewBuffer(buf[:0])
	b.Grow(int(size) + bytes.MinRead) // room left to read the end without growing
	_, err := b.ReadFrom(io.LimitReader(r, limit+1))
	return b.Bytes(), err
}

// getJSON fetches and decodes a JSON document.
func getJSON(ctx context.Context, client *http.Client, url string, v any) error {
	body, _, err := Get(ctx, client, url, "application/json", maxProbeBody)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &DecodeError{URL: url, Err: err}
	}
	return nil
}

// getText fetches a short text answer.
func getText(ctx context.Context, client *http.Client, url string) (string, error) {
	body, _, err := Get(ctx, client, url, "", maxProbeBody)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(body)), nil
}

// answered reports whether err is an HTTP answer (any status) or a decode
// error, as opposed to a transport failure: the server is there.
func answered(err error) bool {
	if err == nil {
		return true
	}
	var he *HTTPError
	var te *TooLargeError
	var de *DecodeError
	return errors.As(err, &he) || errors.As(err, &te) || errors.As(err, &de)
}

// unusable reports whether err is an answer that cannot be read: one that
// redirects in a loop or away, or whose body stalls. The server is there,
// but it says nothing about itself; such an error is kept and returned as
// a transport error would be, for the caller to name.
func unusable(err error) bool {
	var se *StalledError
	var re *RedirectError
	return errors.As(err, &se) || errors.As(err, &re)
}

// isTimeout reports whether err is a request's time running out.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
