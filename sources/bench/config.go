package bench

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// Config is one benchmark run.
type Config struct {
	// URL is the server's base URL (a trailing /v1 is dropped).
	URL string
	API API
	// Model is the served model name; "" asks /v1/models (/api/tags for
	// Ollama's native APIs) and takes the first.
	Model string
	// APIKey is sent as "Authorization: Bearer …"; it is never logged,
	// printed or saved.
	APIKey string

	// Concurrency caps the requests in flight (0 = no cap). With Rate Inf
	// it is the number of streams of the closed loop.
	Concurrency int
	// Rate is how requests arrive, as `vllm bench serve --request-rate`:
	//   - a finite Rate runs an open loop: requests arrive at Rate req/s,
	//     spaced by a gamma distribution of shape Burstiness (1 = Poisson,
	//     Inf = constant spacing, below 1 = burstier), at most Concurrency
	//     in flight;
	//   - Inf sends every request at once, at most Concurrency in flight:
	//     with a Concurrency that is a closed loop of that many streams;
	//     without, all NumRequests go out together (a Duration alone cannot
	//     bound "all at once", so Validate refuses it);
	//   - 0 (not given) is the closed loop, of 16 streams unless
	//     Concurrency says otherwise.
	Rate       report.Rate
	Burstiness float64

	// NumRequests or Duration ends the run (the one that comes first when
	// both are set). Duration stops sending, lets the requests in flight
	// finish for Grace, then stops them (counted as cancelled): a run ends
	// at Duration + Grace whatever the server does.
	NumRequests int
	Duration    time.Duration
	Grace       time.Duration
	// Warmup requests run first and are not counted. Together they may take
	// at most Timeout, and at most Duration when the run has one; when none
	// of them finished by then the run stops, measuring nothing. With
	// Warmup 0 nothing is sent before the measured requests.
	Warmup int

	// InputLen is the prompt's target length in words (≈ tokens; the real
	// count comes from the response's usage); OutputLen is max_tokens.
	// PrefixLen words at the start are shared by every prompt, to exercise
	// prefix caching.
	InputLen, OutputLen, PrefixLen int
	// NoExtras leaves out ignore_eos/min_tokens (normally sent, and dropped
	// by themselves when the server refuses them).
	NoExtras bool
	Seed     uint64

	SLO report.SLO
	// Timeout bounds one request (default 5 min).
	Timeout time.Duration
	// FollowRedirects follows redirects to other hosts too; by default
	// only those on the server's own host are. The API key is not sent
	// to another host either way.
	FollowRedirects bool
	// Client, when set, replaces the tuned HTTP client (tests).
	Client *http.Client
}

// DefaultStreams is the closed loop's width when neither Rate nor
// Concurrency is given (the quick preset).
const DefaultStreams = 16

// Defaults fills unset fields: with neither Rate nor Concurrency, a closed
// loop of 16 streams; 30 s unless NumRequests; 256-word prompts, 128
// output tokens, 2 warmup requests. An explicit Rate Inf keeps Concurrency
// 0 (all at once).
func (c *Config) Defaults() {
	if c.API == "" {
		c.API = Chat
	}
	if c.Rate == 0 {
		c.Rate = report.Inf
		if c.Concurrency == 0 {
			c.Concurrency = DefaultStreams
		}
	}
	if c.Burstiness == 0 {
		c.Burstiness = 1
	}
	if c.NumRequests == 0 && c.Duration == 0 {
		c.Duration = 30 * time.Second
	}
	if c.Grace == 0 && c.Duration > 0 {
		c.Grace = min(max(c.Duration/10, minGrace), maxGrace)
	}
	if c.InputLen == 0 {
		c.InputLen = 256
	}
	if c.OutputLen == 0 {
		c.OutputLen = 128
	}
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Minute
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

// The default grace is a tenth of the duration within these bounds: long
// enough for most answers in flight to finish, short enough that the end
// comes when it was asked for.
const (
	minGrace = 2 * time.Second
	maxGrace = 30 * time.Second
)

// Validate reports a configuration that cannot run, saying what to change.
func (c *Config) Validate() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("bad URL %q: give the server's base URL, e.g. http://127.0.0.1:8000", c.URL)
	}
	if _, err := ParseAPI(string(c.API)); err != nil {
		return err
	}
	switch {
	case c.Concurrency < 0:
		return errors.New("concurrency must be positive")
	case c.Rate < 0 || math.IsNaN(float64(c.Rate)):
		return errors.New("--rate must be a positive number of requests per second, or inf")
	case c.NumRequests < 0 || c.Duration < 0 || c.Warmup < 0 || c.Grace < 0:
		return errors.New("--num-requests, --duration, --grace and --warmup cannot be negative")
	case c.AllAtOnce() && c.NumRequests == 0:
		return errors.New("--rate inf sends every request at once, so it needs --num-requests N " +
			"(or --concurrency N for a closed loop of N streams, which --duration can bound)")
	case c.InputLen < 1 || c.OutputLen < 1 || c.PrefixLen < 0 || c.PrefixLen > c.InputLen:
		return errors.New("--input-len and --output-len must be ≥ 1 and --prefix-len ≤ --input-len")
	}
	return checkBurstiness(c.Burstiness)
}

// AllAtOnce reports whether the run sends all its requests at once with no
// cap on those in flight: Rate Inf without Concurrency (after Defaults), as
// `vllm bench serve --request-rate inf` without --max-concurrency.
func (c *Config) AllAtOnce() bool {
	return c.Rate.IsInf() && c.Concurrency == 0
}

// streams is how many requests may be in flight at once (0: no cap and
// not all at once, i.e. an uncapped open loop).
func (c *Config) streams() int {
	if c.AllAtOnce() {
		return c.NumRequests
	}
	return c.Concurrency
}

// BaseURL is URL without its query, a trailing slash or /v1: where the
// API's paths go.
func (c *Config) BaseURL() string {
	u, err := url.Parse(c.URL)
	if err != nil { // Validate refuses it; keep the old reading
		return strings.TrimSuffix(strings.TrimSuffix(c.URL, "/"), "/v1")
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawPath = ""
	return u.String()
}

// endpoint is the URL of the API path on the server, with the query that
// URL carried (some gateways take their token there): .../v1?token=X asks
// .../v1/models?token=X, not .../v1?token=X/v1/models.
func (c *Config) endpoint(path string) string {
	s := c.BaseURL() + path
	if u, err := url.Parse(c.URL); err == nil && u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s
}
