package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// newClient builds the HTTP client one endpoint is polled with: every
// request bounded by cfg.Timeout (a server that accepts and never answers
// costs one timeout, not a hung UI), and the API key sent only to the
// endpoint's own host.
//
// An endpoint on this machine is asked for its metrics uncompressed: the
// bytes cost nothing on loopback, while gzip costs the engine's server
// (prometheus_client compresses whenever the client accepts it) and llmtop
// CPU on the box being watched, every scrape. Remote endpoints keep gzip.
func newClient(cfg Config) *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    model.IsLoopback(cfg.URL),
		ReadBufferSize:        32 << 10, // a scrape in a few reads, not a dozen
	}
	if cfg.InsecureSkipVerify {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the person's explicit opt-in (--insecure-skip-verify)
	}
	rt := bounded{next: probe.Bearer(tr, cfg.URL, cfg.APIKey), d: cfg.Timeout}
	return &http.Client{Transport: rt, CheckRedirect: probe.CheckRedirect(cfg.FollowRedirects)}
}

// bounded bounds each request, its body's read included, by d through the
// request's context. http.Client.Timeout does the same, but over a
// transport it does not know (probe's guard, which keeps the API key on
// the endpoint's host) it cancels the old way: a goroutine and a timer of
// its own per request, and the transport's goroutine waiting on
// Request.Cancel, woken at each scrape's end, now and then in a wake-up of
// their own (make monitor-cost). A context's deadline is a timer that never
// fires while the scrape is on time.
type bounded struct {
	next http.RoundTripper
	d    time.Duration
}

func (b bounded) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(r.Context(), b.d)
	resp, err := b.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// Unwrap is the transport under the bound.
func (b bounded) Unwrap() http.RoundTripper { return b.next }

// cancelOnClose ends the request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// scrapeError is a classified failure with what the user can do about it.
type scrapeError struct {
	kind model.ScrapeErrKind
	msg  string
	hint string
}

func (e *scrapeError) Error() string { return e.msg }

// classify turns a fetch or probe error into a scrapeError. hint404 is the
// engine's own advice when its metrics route is missing.
func classify(err error, what string, cfg Config, hint404 string) *scrapeError {
	var se *scrapeError
	if errors.As(err, &se) {
		return se
	}
	var he *probe.HTTPError
	var tl *probe.TooLargeError
	var de *probe.DecodeError
	var st *probe.StalledError
	var re *probe.RedirectError
	var ce *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	switch {
	case errors.As(err, &ce) || errors.As(err, &ua) || errors.As(err, &hn):
		return &scrapeError{model.ErrUnreachable, fmt.Sprintf("%s: TLS certificate not trusted: %v", what, err),
			"the server's certificate is not one this machine trusts (a cluster's own CA, self-signed): add its CA to the system's, or pass --insecure-skip-verify to accept it unchecked"}
	case errors.As(err, &re):
		hint := "the server (or a proxy before it) redirects in a circle: give the final URL, or --metrics-path"
		if re.Why == "another host" {
			hint = "llmtop follows redirects on the endpoint's own host only: give the final URL, or pass --follow-redirects (the API key is never sent to another host)"
		}
		return &scrapeError{model.ErrRedirect, what + " " + re.What(), hint}
	case errors.As(err, &st):
		return &scrapeError{model.ErrStalled,
			fmt.Sprintf("%s: answered %d, then the body stalled after %d bytes (nothing more within %s)", what, st.Status, st.Got, cfg.Timeout),
			"the server sent its headers, then stopped: an exporter stuck mid-scrape or a proxy holding the body; raise --timeout if it is just slow"}
	case errors.As(err, &he):
		switch {
		case he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden:
			return &scrapeError{model.ErrAuth, fmt.Sprintf("%s: %d %s", what, he.Status, http.StatusText(he.Status)),
				"the server wants credentials: pass --api-key (or set OPENAI_API_KEY) so llmtop sends Authorization: Bearer …"}
		case he.Status == http.StatusNotFound || he.Status == http.StatusNotImplemented:
			h := hint404
			if h == "" {
				h = "pass --metrics-path if the metrics live elsewhere"
			}
			return &scrapeError{model.ErrNotFound, fmt.Sprintf("%s: %d %s", what, he.Status, http.StatusText(he.Status)), h}
		case he.Status >= 500:
			return &scrapeError{model.ErrServer, he.Error(), "the server failed to answer: see its log"}
		default:
			return &scrapeError{model.ErrMalformed, he.Error(), ""}
		}
	case errors.As(err, &tl):
		return &scrapeError{model.ErrTooLarge,
			fmt.Sprintf("%s: body over %d MiB, stopped reading", what, tl.Limit>>20),
			"is --metrics-path pointing at the metrics route? Otherwise the exporter emits too many series"}
	case errors.As(err, &de):
		return &scrapeError{model.ErrMalformed, fmt.Sprintf("%s: %v", what, de.Err), "is this the right URL and --engine?"}
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return &scrapeError{model.ErrTimeout, fmt.Sprintf("%s: no answer within %s", what, cfg.Timeout),
			"the server accepted the connection but did not answer: overloaded or hung? raise --timeout if it is just slow"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &scrapeError{model.ErrRefused, fmt.Sprintf("%s: connection refused", what),
			"nothing listens there: is the engine running, on this port?"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &scrapeError{model.ErrMalformed, fmt.Sprintf("%s: body truncated (connection closed mid-answer)", what), ""}
	case errors.Is(err, probe.ErrUnrecognised):
		return &scrapeError{model.ErrMalformed, err.Error(), "pass --engine vllm|sglang|tgi|llamacpp|trtllm|triton|ollama"}
	}
	return &scrapeError{model.ErrUnreachable, fmt.Sprintf("%s: %v", what, err), "check the URL, DNS and network path"}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// down reports whether an error means the endpoint is not there at all, so
// the poller identifies it again when it comes back.
func (e *scrapeError) down() bool {
	switch e.kind {
	case model.ErrRefused, model.ErrTimeout, model.ErrUnreachable:
		return true
	}
	return false
}
