package behaviour

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// maxBody caps what one answer may be (a rendered template, 256 tokens of
// text, /api/show's model info); maxRaw what is kept of each exchange.
const (
	maxBody = 1 << 20
	maxRaw  = 4 << 10
)

// errMissing is a route the engine does not have (404/405/501).
var errMissing = errors.New("route missing")

// conn sends the probe's requests to one endpoint and keeps each exchange.
type conn struct {
	c       *http.Client
	base    string
	key     string
	timeout time.Duration
	raw     []model.Exchange
	// timeouts counts requests in a row that got no answer in time.
	timeouts int
}

func newConn(base, key string, timeout time.Duration) *conn {
	return &conn{base: strings.TrimRight(base, "/"), key: key, timeout: timeout, c: &http.Client{
		CheckRedirect: probe.CheckRedirect(false),
		Transport: probe.Bearer(&http.Transport{
			Proxy:       http.ProxyFromEnvironment,
			DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			// One connection, reused: the requests are sequential.
			MaxIdleConnsPerHost: 1,
		}, base, key),
	}}
}

// call sends body (nil for GET) to route and decodes the JSON answer into
// out (when not nil). The exchange is kept for the raw view, with the key
// never in it (the transport adds the Authorization header, which is not
// kept). A route the engine lacks is errMissing.
func (k *conn) call(ctx context.Context, check, method, route string, body any, out any) error {
	var reqBody []byte
	if body != nil {
		var err error
		if reqBody, err = json.Marshal(body); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, k.base+route, bytes.NewReader(reqBody))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	x := model.Exchange{Check: check, Method: method, Route: route, Request: k.scrub(string(reqBody))}
	start := time.Now()
	resp, err := k.c.Do(req)
	defer func() {
		x.Ms = float64(time.Since(start).Microseconds()) / 1000
		k.raw = append(k.raw, x)
	}()
	if err != nil {
		if ctx.Err() != nil {
			k.timeouts++
		}
		err = transportErr(ctx, err, k.timeout)
		x.Error = k.scrub(err.Error())
		return err
	}
	k.timeouts = 0
	defer resp.Body.Close()
	x.Status = resp.StatusCode
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	x.Response = k.scrub(bound(string(b)))
	switch {
	case rerr != nil:
		err = fmt.Errorf("%s: the answer stopped: %v", route, transportErr(ctx, rerr, k.timeout))
	case len(b) > maxBody:
		err = fmt.Errorf("%s answered more than %d bytes; not read", route, maxBody)
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented:
		err = fmt.Errorf("%w: %s answered %d", errMissing, route, resp.StatusCode)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		err = fmt.Errorf("%s answered %d: pass --api-key (or set OPENAI_API_KEY)", route, resp.StatusCode)
	case resp.StatusCode/100 != 2:
		err = fmt.Errorf("%s answered %d: %s", route, resp.StatusCode, oneLine(string(b), 160))
	case out != nil:
		if jerr := json.Unmarshal(b, out); jerr != nil {
			err = fmt.Errorf("%s: not the JSON expected: %v", route, jerr)
		}
	}
	if err != nil {
		x.Error = k.scrub(err.Error())
	}
	return err
}

// scrub keeps the key out of anything kept or shown, even where a server
// echoes it back.
func (k *conn) scrub(s string) string {
	if k.key != "" {
		s = strings.ReplaceAll(s, k.key, model.Redacted)
	}
	return model.RedactText(s)
}

func transportErr(ctx context.Context, err error, timeout time.Duration) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL may carry a token
	}
	if ctx.Err() != nil {
		return fmt.Errorf("no answer within %s", timeout)
	}
	return err
}

func bound(s string) string {
	if len(s) <= maxRaw {
		return s
	}
	return s[:maxRaw] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// missing reports whether err is a route the engine lacks.
func missing(err error) bool { return errors.Is(err, errMissing) }
