package prometheus

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
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

	// MaxTargets bounds the engine targets followed (DefaultMaxTargets
	// when zero); the rest are dropped with a note.
	MaxTargets int

	// transport replaces the network (the scale benchmark measures
	// llmtop's cost without a server's); maxBytes and maxSeries, when
	// set, replace the bounds on a refresh's answers (tests).
	transport http.RoundTripper
	maxBytes  int64
	maxSeries int
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
	// every output scrubs them, and the base64 an echoed header carries
	model.AddBasicAuth(c.User, c.Password)
	model.AddSecret(c.Bearer)
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
	if c.MaxTargets <= 0 {
		c.MaxTargets = DefaultMaxTargets
	}
	c.Match, err = normMatch(c.Match)
	return c, err
}

// newClient builds the URL builder (client_golang's) and the HTTP client
// the queries go through.
func newClient(c Config) (api.Client, *http.Client, error) {
	var tr http.RoundTripper = &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: c.Timeout, MaxIdleConnsPerHost: 8}
	if c.transport != nil {
		tr = c.transport
	}
	var set func(http.Header)
	switch {
	case c.Bearer != "":
		set = func(h http.Header) { h.Set("Authorization", "Bearer "+c.Bearer) }
	case c.User != "":
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(c.User+":"+c.Password))
		set = func(h http.Header) { h.Set("Authorization", auth) }
	}
	// the credentials go to the server's scheme, host and port only
	rt := probe.Guard(tr, c.URL, set)
	cl, err := api.NewClient(api.Config{Address: c.URL, RoundTripper: rt})
	if err != nil {
		return nil, nil, err
	}
	return cl, &http.Client{Transport: rt}, nil
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
