// Package engine reads serving engines (vLLM, SGLang, TGI, llama.cpp,
// TensorRT-LLM, Triton, Ollama) and turns what they expose into
// engine-neutral model.Scrape values: one adapter per engine maps its metric
// names, label sets and units onto the model's concepts, and leaves out what
// the engine does not expose rather than inventing a zero.
//
// ScrapeOnce reads an endpoint once; a Poller reads it on an interval.
// Failures come back classified (model.ScrapeErrKind) with the engine's own
// hint: which flag enables its metrics, that it wants an API key, …
package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// Config says how to read one endpoint.
type Config struct {
	URL          string        // base URL, e.g. "http://127.0.0.1:8000"
	Engine       model.Engine  // forced engine; "" = detect
	Interval     time.Duration // poll interval, default 1s, clamped >= 250ms
	Timeout      time.Duration // per HTTP request, default 2s
	APIKey       string        // sent as "Authorization: Bearer …", never logged
	MetricsPath  string        // override of the engine's metrics path
	MaxBodyBytes int64         // read cap, default 16 MiB
	// FollowRedirects follows redirects to other hosts too; by default
	// only those on the endpoint's own host are (the API key goes to the
	// endpoint's host and port only, either way).
	FollowRedirects bool
	// InsecureSkipVerify accepts any TLS certificate (an explicit opt-in:
	// KServe serves its vLLM pods over https with the cluster's own
	// certificate). The traffic stays encrypted; the peer is not checked.
	InsecureSkipVerify bool
}

// Defaults.
const (
	DefaultInterval     = time.Second
	MinInterval         = 250 * time.Millisecond
	DefaultTimeout      = 2 * time.Second
	DefaultMaxBodyBytes = 16 << 20
)

// withDefaults fills unset fields and normalises the URL: a missing scheme
// becomes http://, and a URL that already ends in a metrics route
// (…/metrics, …/prometheus/metrics) is split into base URL and MetricsPath.
func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Interval < MinInterval {
		c.Interval = MinInterval
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	base, path := SplitURL(c.URL)
	c.URL = base
	if c.MetricsPath == "" {
		c.MetricsPath = path
	}
	return c
}

// SplitURL normalises a user-given endpoint into a base URL (the endpoint's
// ID) and the metrics path it named, if any: "host:8000" and
// "http://host:8000/v1" are both "http://host:8000".
func SplitURL(raw string) (base, metricsPath string) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return strings.TrimRight(s, "/"), ""
	}
	p := strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/prometheus/metrics", "/metrics"} {
		if strings.HasSuffix(p, suffix) {
			metricsPath = suffix
			if u.RawQuery != "" {
				metricsPath += "?" + u.RawQuery
			}
			p = strings.TrimSuffix(p, suffix)
			break
		}
	}
	// An OpenAI base URL (…/v1, as in OPENAI_BASE_URL) names the server.
	p = strings.TrimSuffix(p, "/v1")
	u.Path, u.RawQuery, u.Fragment = p, "", ""
	return strings.TrimRight(u.String(), "/"), metricsPath
}

// ScrapeOnce detects (unless forced) + identifies + health-checks + scrapes
// metrics once.
func ScrapeOnce(ctx context.Context, cfg Config) model.Scrape {
	return newSession(cfg).scrape(ctx)
}

// session is one endpoint's client and what is known about it between
// polls.
type session struct {
	cfg      Config
	client   *http.Client
	id       model.Identity
	known    bool      // id is a successful identification
	idAt     time.Time // when it was made
	lastDown bool
	llamaGen genCounter     // llama.cpp: generated tokens including in-flight slots
	overhead overheadWindow // a router's own added latency over the last minute
	// sinceHealth counts scrapes since /health was last asked.
	sinceHealth int
	// loadEvents is a router's count of load-balancing events at the
	// last scrape, loadActed when llmtop last saw it grow.
	loadEvents   float64
	loadEventsOK bool
	loadActed    time.Time
	// bodySize is the last metrics body's length: the next one is read
	// into a buffer that size where the server does not announce it
	// (chunked), instead of one grown from 512 bytes.
	bodySize int64
	// body is the last metrics body's array, once parsed (nothing parsed
	// from it keeps a byte of it: the families' strings are copies): the
	// next body is read into it.
	body []byte
	// strs are the last parse's strings, which the next reuses.
	strs *interner
	// roles is the last scrape's classifyRole answer (roleMemo).
	roles roleMemo
}

// healthEvery is how often a scrape whose engine is up asks /health
// beside /metrics (issue 33: one request a refresh is the floor). It is
// asked at every scrape while the engine is unhealthy or loading (to see
// it recover), and at once when /metrics fails (to tell an engine that
// answers 503 from one that is gone).
const healthEvery = 10

// reidentifyAfter refreshes identity (models can change: Ollama loads and
// unloads, a router swaps backends) even while the endpoint stays up.
const reidentifyAfter = 5 * time.Minute

func newSession(cfg Config) *session {
	cfg = cfg.withDefaults()
	return &session{cfg: cfg, client: newClient(cfg)}
}

// scrape reads the endpoint once. Everything the endpoint wrote is cleaned
// here, where it enters llmtop (model.CleanScrape): no face has to
// remember to.
func (s *session) scrape(ctx context.Context) model.Scrape {
	return model.CleanScrape(s.read(ctx))
}

// askHealth asks the engine's health route now.
func (s *session) askHealth(ctx context.Context) {
	s.id.Health, s.id.HealthDetail = probe.Health(ctx, s.client, s.cfg.URL, s.id.Engine)
	s.sinceHealth = 0
}

func (s *session) read(ctx context.Context) model.Scrape {
	start := time.Now()
	sc := model.Scrape{Endpoint: s.cfg.URL, Time: start}
	finish := func(err *scrapeError) model.Scrape {
		sc.Took = time.Since(start)
		if err != nil {
			sc.Err, sc.ErrKind, sc.Hint = err.msg, err.kind, err.hint
			s.lastDown = err.down()
			if s.lastDown {
				// Identify again when it answers (it may come back as
				// something else); meanwhile show what it was, down.
				s.known = false
				if s.id.Engine != model.Unknown {
					sc.Identity = s.id
				}
				sc.Identity.Health, sc.Identity.HealthDetail = model.HealthDown, err.msg
			}
		} else {
			s.lastDown = false
		}
		return sc
	}
	if !s.known || s.lastDown || start.Sub(s.idAt) > reidentifyAfter {
		id, err := probe.Identify(ctx, s.client, s.cfg.URL, s.cfg.Engine)
		sc.Identity = id
		if err != nil {
			if se := answered503(err, id, s.cfg.URL); se != nil {
				return finish(se)
			}
			if errors.Is(err, probe.ErrUnrecognised) {
				// No engine's fingerprint: a router, gateway or proxy
				// says what it is on its metrics route.
				if se := s.layerAt(ctx, start, &sc.Identity); se != nil {
					return finish(se)
				}
			}
			return finish(classify(err, s.cfg.URL, s.cfg, ""))
		}
		s.id, s.known, s.idAt, s.sinceHealth = id, true, start, 0
	} else if s.sinceHealth++; s.sinceHealth >= healthEvery || s.id.Health == model.HealthUnhealthy || s.id.Health == model.HealthLoading {
		s.askHealth(ctx)
	}
	sc.Identity = s.id
	a, ok := adapterFor(s.id.Engine)
	if !ok {
		return finish(&scrapeError{model.ErrMalformed, "no adapter for engine " + string(s.id.Engine), ""})
	}
	c := &collector{ctx: ctx, s: s, a: a, now: start, id: &sc.Identity}
	samples, err := a.collect(c)
	if err != nil {
		se := classify(err, s.cfg.URL+c.lastPath, s.cfg, a.hint404)
		if !se.down() && s.sinceHealth > 0 {
			s.askHealth(ctx)
			sc.Identity.Health, sc.Identity.HealthDetail = s.id.Health, s.id.HealthDetail
		}
		return finish(se)
	}
	if len(sc.Identity.Models) == 0 {
		// Triton and metrics-only ports name their models only in labels.
		for _, smp := range samples {
			if smp.Model != "" {
				sc.Identity.Models = append(sc.Identity.Models, model.ModelInfo{ID: smp.Model})
			}
		}
	}
	// JSON routes (/v1/models, Ollama's /api/ps and /api/tags) are not
	// capped by the Prometheus caps: the same bound on models applies.
	if n := len(sc.Identity.Models); n > maxLabelValues {
		sc.Identity.Models = sc.Identity.Models[:maxLabelValues:maxLabelValues]
		c.notes = append(c.notes, fmt.Sprintf("truncated: %s models, showing the first %s", groupThousands(n), groupThousands(maxLabelValues)))
	}
	if n := len(samples); n > maxLabelValues {
		samples = samples[:maxLabelValues:maxLabelValues]
	}
	s.id.Models = sc.Identity.Models // adapters may refresh the model list
	for i := range samples {
		// The JSON adapters (llama.cpp /slots, Ollama, TRT-LLM) and sums
		// over series get the same check as Prometheus series.
		model.RejectImplausible(&samples[i])
		samples[i].Notes = append(samples[i].Notes, c.notes...)
	}
	sc.Samples = samples
	return finish(nil)
}

// collector is what an adapter reads an endpoint with.
type collector struct {
	ctx      context.Context
	s        *session
	a        adapter
	now      time.Time
	id       *model.Identity
	lastPath string
	// notes are remarks on the whole scrape (what the caps left out),
	// added to every sample.
	notes []string
}

// metricsPath is the user's override or the adapter's default.
func (c *collector) metricsPath() string {
	if c.s.cfg.MetricsPath != "" {
		return c.s.cfg.MetricsPath
	}
	return c.a.metricsPath
}

// get fetches a path under the endpoint with the read cap.
func (c *collector) get(path, accept string) ([]byte, error) {
	c.lastPath = path
	if accept != promAccept {
		body, _, err := probe.Get(c.ctx, c.s.client, c.s.cfg.URL+path, accept, c.s.cfg.MaxBodyBytes)
		return body, err
	}
	buf := c.s.body
	c.s.body = nil // the caller gives it back once parsed (prom)
	body, _, err := probe.GetInto(c.ctx, c.s.client, c.s.cfg.URL+path, accept, c.s.cfg.MaxBodyBytes, c.s.bodySize, buf)
	if err == nil {
		c.s.bodySize = int64(len(body))
	}
	return body, err
}

// prom fetches and parses a Prometheus text route.
func (c *collector) prom(path string) (families, error) {
	body, err := c.get(path, promAccept)
	if err != nil {
		return nil, err
	}
	if c.s.strs == nil {
		c.s.strs = newInterner()
	}
	fams, err := parsePromIn(body, unreadBy(engines.Of(c.a.engine)), c.s.strs)
	c.s.body = body[:0] // parsed: the next scrape reads into it
	if err != nil {
		return nil, &scrapeError{model.ErrMalformed, c.s.cfg.URL + path + ": " + err.Error(),
			"is --metrics-path the Prometheus route? (" + c.a.metricsPath + " for " + string(c.a.engine) + ")"}
	}
	c.notes = append(c.notes, limitSeries(fams, maxSeries, maxLabelValues)...)
	c.notes = append(c.notes, rejectImplausible(fams)...)
	return fams, nil
}

// unreadBy is what the parser skips on an endpoint s serves (s nil: one
// not identified yet): the families llmtop reads nowhere (engines.Unread).
func unreadBy(s *engines.Spec) func(string) bool {
	return func(name string) bool { return engines.Unread(s, name) }
}

// meta is what a pure mapping function needs besides the families.
func (c *collector) meta() meta {
	m := meta{endpoint: c.s.cfg.URL, t: c.now}
	if len(c.id.Models) > 0 {
		m.model = c.id.Models[0].ID
	}
	return m
}

// meta names the samples a mapping produces.
type meta struct {
	endpoint string
	t        time.Time
	model    string // served model from identity, for engines without a model label
}

func (m meta) sample(modelName string) model.Sample {
	if modelName == "" {
		modelName = m.model
	}
	return model.NewSample(m.endpoint, modelName, m.t, model.FromScrape)
}

// answered503 names a server that answers its health route 503 and no
// identity route: a worker whose engine is not ready (loading, restarting,
// dead) or a router with no healthy worker. It is not "answers HTTP, but not
// as vLLM …": no engine said what it is, because none could answer yet.
func answered503(err error, id model.Identity, url string) *scrapeError {
	detail := id.HealthDetail
	var ue *probe.UnavailableError
	switch {
	case !errors.Is(err, probe.ErrUnrecognised):
		return nil
	case id.Health == model.HealthUnhealthy && strings.Contains(id.HealthDetail, "answered 503"):
	case errors.As(err, &ue):
		// its health route may say up (a proxy's own) while the API
		// routes behind it answer 503
		detail = ue.HTTPError.Error()
	default:
		return nil
	}
	return &scrapeError{model.ErrServer, url + ": answered HTTP 503 Service Unavailable (" + detail + ")",
		"the server is up but its engine is not ready: loading, restarting or dead, or a router with no healthy worker behind it; its log says which. llmtop identifies the engine once it answers (or pass --engine to name it)"}
}
