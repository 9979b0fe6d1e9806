package prometheus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"

	"github.com/llmtop/llmtop/model"
)

// Config says which Prometheus to read and how.
type Config struct {
	// URL is the Prometheus server's base URL (http://prometheus:9090).
	URL string
	// Match is extra label matchers ANDed into every selector
	// (namespace="prod",job=~"vllm-.*").
	Match string
	// User and Password are HTTP basic auth; Bearer a bearer token. They
	// are sent only to URL's host and never printed.
	User, Password, Bearer string
	// Window is the span of rate() and histogram_quantile().
	Window time.Duration
	// Timeout bounds each refresh (all its queries together).
	Timeout time.Duration
	// Interval is the time between refreshes.
	Interval time.Duration

	// transport replaces the network (the scale benchmark measures
	// llmtop's cost without a server's); maxAnswer, when set, replaces
	// the bound on an answer (tests).
	transport http.RoundTripper
	maxAnswer int64
}

// DefaultTimeout bounds a refresh when Config.Timeout is zero.
const DefaultTimeout = 5 * time.Second

func (c Config) check() (Config, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("--prometheus %s: want the server's URL, e.g. http://prometheus:9090", model.RedactURL(c.URL))
	}
	if u.User != nil && c.User == "" {
		c.User = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	u.User = nil
	c.URL = strings.TrimSuffix(u.String(), "/")
	if c.User != "" && c.Bearer != "" {
		return c, errors.New("--prometheus: give basic auth or a bearer token, not both")
	}
	if c.Window <= 0 {
		c.Window = time.Minute
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Interval <= 0 {
		c.Interval = 5 * time.Second
	}
	c.Match, err = normMatch(c.Match)
	return c, err
}

// authTransport adds the credentials to requests for the server's own host
// only (the client never follows a redirect elsewhere with them).
type authTransport struct {
	host                   string
	user, password, bearer string
	next                   http.RoundTripper
	max                    int64
}

func (t *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == t.host && (t.user != "" || t.bearer != "") {
		r = r.Clone(r.Context())
		if t.bearer != "" {
			r.Header.Set("Authorization", "Bearer "+t.bearer)
		} else {
			r.SetBasicAuth(t.user, t.password)
		}
	}
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		resp.Body = &capped{r: resp.Body, left: t.max, max: t.max}
	}
	return resp, err
}

// maxAnswer bounds one answer: 500 targets answer about 2 MiB; a --match
// that selects far more than engines must not read until memory runs out.
const maxAnswer = 256 << 20

// capped fails a body that goes on past its bound.
type capped struct {
	r         io.ReadCloser
	left, max int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("Prometheus's answer is over %d KiB: narrow --match", c.max>>10)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capped) Close() error { return c.r.Close() }

func newClient(c Config) (api.Client, error) {
	u, _ := url.Parse(c.URL)
	var tr http.RoundTripper = &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: c.Timeout, MaxIdleConnsPerHost: 8}
	if c.transport != nil {
		tr = c.transport
	}
	cl, err := api.NewClient(api.Config{Address: c.URL, RoundTripper: &authTransport{
		host: u.Host, user: c.User, password: c.Password, bearer: c.Bearer, next: tr, max: cmp.Or(c.maxAnswer, maxAnswer),
	}})
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// explain turns a query error into one line the user can act on, with no
// secret in it.
func (s *Source) explain(err error) string {
	msg := err.Error()
	var perr *apiError
	if errors.As(err, &perr) {
		switch {
		case perr.Type == "bad_data":
			msg = "Prometheus refused the query (" + perr.Msg + "): check --match"
		case perr.Type == "timeout" || perr.Type == "canceled":
			msg = fmt.Sprintf("Prometheus did not answer within %s", s.cfg.Timeout)
		case perr.Code == http.StatusUnauthorized || perr.Code == http.StatusForbidden:
			msg = "Prometheus answered " + perr.Msg + ": check --prometheus-user/--prometheus-password-file or --prometheus-bearer-token-file"
		case perr.Code == http.StatusNotFound:
			msg = "Prometheus answered " + perr.Msg + " for /api/v1/query: is --prometheus the server's base URL (a path prefix such as /prometheus included)?"
		case perr.Type == "http":
			msg = "Prometheus answered " + perr.Msg
		default:
			msg = "Prometheus: " + perr.Type + ": " + perr.Msg
		}
	} else if strings.Contains(msg, "context deadline exceeded") || errors.Is(err, context.DeadlineExceeded) {
		msg = fmt.Sprintf("Prometheus did not answer within %s", s.cfg.Timeout)
	} else if uerr := (*url.Error)(nil); errors.As(err, &uerr) {
		msg = "cannot reach Prometheus: " + uerr.Err.Error()
	}
	for _, secret := range []string{s.cfg.Password, s.cfg.Bearer} {
		if len(secret) >= 4 {
			msg = strings.ReplaceAll(msg, secret, model.Redacted)
		}
	}
	return model.RedactText(msg)
}
