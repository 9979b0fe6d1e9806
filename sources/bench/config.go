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

	// Concurrency is the number of streams of the closed loop (Rate is
	// Inf), or the cap on requests in flight of the open loop (0 = none).
	Concurrency int
	// Rate > 0 runs an open loop: requests arrive at Rate req/s, spaced by
	// a gamma distribution of shape Burstiness (1 = Poisson, Inf = constant
	// spacing, below 1 = burstier).
	Rate       report.Rate
	Burstiness float64

	// NumRequests or Duration ends the run (the one that comes first when
	// both are set; Duration stops sending and waits for requests in flight).
	NumRequests int
	Duration    time.Duration
	// Warmup requests run first and are not counted.
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
	// Client, when set, replaces the tuned HTTP client (tests).
	Client *http.Client
}

// Defaults fills unset fields: 16 streams, 30 s, 256-word prompts, 128
// output tokens, 2 warmup requests.
func (c *Config) Defaults() {
	if c.API == "" {
		c.API = Chat
	}
	if c.Rate == 0 {
		c.Rate = report.Inf
	}
	if c.Burstiness == 0 {
		c.Burstiness = 1
	}
	if c.Concurrency == 0 && c.Rate.IsInf() {
		c.Concurrency = 16
	}
	if c.NumRequests == 0 && c.Duration == 0 {
		c.Duration = 30 * time.Second
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
	case c.Rate.IsInf() && c.Concurrency == 0:
		return errors.New("a closed loop needs --concurrency ≥ 1 (or give --rate)")
	case c.NumRequests < 0 || c.Duration < 0 || c.Warmup < 0:
		return errors.New("--num-requests, --duration and --warmup cannot be negative")
	case c.InputLen < 1 || c.OutputLen < 1 || c.PrefixLen < 0 || c.PrefixLen > c.InputLen:
		return errors.New("--input-len and --output-len must be ≥ 1 and --prefix-len ≤ --input-len")
	case !(c.Burstiness > 0) || math.IsNaN(c.Burstiness):
		return errors.New("burstiness must be > 0 (1 = Poisson, inf = constant rate)")
	}
	return nil
}

// BaseURL is URL without a trailing slash or /v1.
func (c *Config) BaseURL() string {
	return strings.TrimSuffix(strings.TrimSuffix(c.URL, "/"), "/v1")
}

// IsLoopback reports whether a URL points at this machine; the TUI asks
// before sending load anywhere else.
func IsLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}
