package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
	"github.com/llmtop/llmtop/sources/probe"
)

// newClient returns an HTTP client for n concurrent streams: enough idle
// connections that no request waits for a dial, no compression (it would
// buffer the stream), no HTTP/2 (one TCP connection per stream, as the
// engines' own benchmarks use).
func newClient(n int) *http.Client {
	if n < 64 {
		n = 64
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        n * 2,
		MaxIdleConnsPerHost: n * 2,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		ReadBufferSize:      readBuf,
		WriteBufferSize:     16 << 10,
	}}
}

// requester sends prepared bodies to one endpoint.
type requester struct {
	client *http.Client
	url    string
	api    API
	// timeout bounds one request.
	timeout time.Duration
	readers sync.Pool // *bufio.Reader, reused across requests
}

// do sends body and fills rec as the response streams in. ctx is the run's
// context: when it ends, the request is cancelled and recorded as such.
func (q *requester) do(ctx context.Context, body []byte, rec *report.Record) {
	rctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, q.url, bytes.NewReader(body))
	if err != nil {
		fail(rec, report.ErrConnect, err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if q.api.ndjson() {
		req.Header.Set("Accept", "application/x-ndjson")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	req.Header.Set("X-Request-Id", "llmtop-bench-"+strconv.Itoa(rec.Index))
	// Servers that advertise keep-alive may still close a connection after a
	// streamed answer (llama-server does); the next request sent on it then
	// fails with EOF before any answer. net/http resends a request on a
	// reused connection only when it is idempotent, and a POST counts as one
	// when it has an Idempotency-Key. A nil value marks it so without sending
	// the header. The resend is safe: it happens only when no byte of an
	// answer came back, and bytes.Reader bodies can be replayed (GetBody).
	req.Header["Idempotency-Key"] = nil
	rec.Start = time.Now()
	resp, err := q.client.Do(req)
	var re *probe.RedirectError
	if err != nil && resp != nil && errors.As(err, &re) {
		rec.Status = resp.StatusCode
		fail(rec, report.ErrHTTP, "HTTP "+strconv.Itoa(resp.StatusCode)+": "+redirectDetail[re.Why])
		return
	}
	if err != nil {
		q.failErr(ctx, rctx, rec, err)
		return
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		q.failStatus(resp, rec)
		return
	}
	br, _ := q.readers.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(resp.Body, readBuf)
	} else {
		br.Reset(resp.Body)
	}
	defer func() { br.Reset(nil); q.readers.Put(br) }()
	lr := lineReader{br: br}
	sc := scratchPool.Get().(*textScratch)
	defer scratchPool.Put(sc)
	st := streamState{api: q.api, rec: rec, text: sc.text[:0]}
	for {
		line, err := lr.next()
		now := time.Now()
		if err != nil {
			if err == io.EOF {
				break
			}
			q.failErr(ctx, rctx, rec, err)
			return
		}
		if kind, detail := st.line(line, now); kind != report.ErrNone {
			fail(rec, kind, detail)
			return
		}
	}
	switch {
	case rec.Chunks == 0:
		fail(rec, report.ErrEmpty, "the stream ended without any content")
	case !st.done:
		fail(rec, report.ErrDisconnect, "the stream ended before its end marker ([DONE] / finish_reason / done)")
	default:
		rec.OK = true
		if !rec.OutputFromUsage {
			rec.OutputTokens = rec.Chunks
		}
		judge(rec, st.text, body, st.reasoning, sc)
	}
}

func fail(rec *report.Record, kind report.ErrKind, detail string) {
	rec.OK, rec.Err, rec.Detail = false, kind, detail
}

// failErr classifies a transport error: the run stopping, the request's own
// timeout, a failed dial, or a connection lost mid-stream.
func (q *requester) failErr(run, req context.Context, rec *report.Record, err error) {
	var ne net.Error
	var oe *net.OpError
	switch {
	case run.Err() != nil:
		fail(rec, report.ErrCancelled, "cancelled")
	case req.Err() != nil || (errors.As(err, &ne) && ne.Timeout()):
		fail(rec, report.ErrTimeout, "no complete answer within "+q.timeout.String())
	case rec.Status == 0 && errors.As(err, &oe) && oe.Op == "dial":
		fail(rec, report.ErrConnect, "cannot connect: "+oe.Err.Error())
	case rec.Status == 0:
		fail(rec, report.ErrDisconnect, "connection lost before the answer: "+withoutURL(err).Error())
	default:
		fail(rec, report.ErrDisconnect, "connection lost mid-stream: "+withoutURL(err).Error())
	}
}

// redirectDetail says why a redirect was not followed (without its URLs,
// which may carry a token).
var redirectDetail = map[string]string{
	"loop":         "redirects in a loop: give the final URL",
	"too many":     "more than 10 redirects: give the final URL",
	"another host": "redirects to another host, not followed: give the final URL, or pass --follow-redirects (the API key is never sent there)",
}

// withoutURL drops the request's URL from a transport error: it may carry
// a token in its query, and the messages name the server otherwise.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// failStatus records a non-200 answer with the start of its body.
func (q *requester) failStatus(resp *http.Response, rec *report.Record) {
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	detail := "HTTP " + strconv.Itoa(resp.StatusCode) + ": " + strings.TrimSpace(string(msg))
	if resp.StatusCode == http.StatusTooManyRequests {
		rec.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		fail(rec, report.ErrRateLimited, detail)
		return
	}
	fail(rec, report.ErrHTTP, detail)
}

// retryAfter reads Retry-After as seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
