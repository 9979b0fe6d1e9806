package main

import (
	"context"
	"io/fs"
	"net"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/probe"
	"github.com/llmtop/llmtop/sources/procfs"
)

// The engine source: one engine.Poller per endpoint, delivering
// model.Scrape through env.Send. `llmtop snapshot` reads the same flags.

var engineFlags struct {
	engine      string
	apiKey      string
	metricsPath string
	timeout     time.Duration
	// followRedirects follows redirects to other hosts too (the API key
	// never goes there).
	followRedirects bool
	// tokenFiles are per-endpoint bearer tokens (URL=FILE); insecure
	// accepts any TLS certificate (issue 26: the picker's metrics port
	// wants a token, KServe serves https with the cluster's own CA).
	tokenFiles []string
	insecure   bool
}

func init() {
	registerSource(sourcePlugin{
		Name:  "engine",
		Flags: engineFlagSet,
		Start: startEngines,
	})
}

// discoverLocal finds what answers on this machine's usual engine ports:
// every face that is given no endpoint (the monitor, diagnose, export,
// snapshot) looks the same way (a test replaces it).
var discoverLocal = func(ctx context.Context) []probe.Found {
	return probe.Discover(ctx, "127.0.0.1", discoveryPorts(procfs.FS()), engineTimeout())
}

// discoveryPorts are the usual engine ports, then the ports this
// machine's engine processes listen on (llama-server --port 50095): an
// engine on a port of its own is found too.
func discoveryPorts(fsys fs.FS) []int {
	out := slices.Clone(probe.DefaultPorts)
	for _, p := range procfs.EnginePorts(fsys) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func engineFlagSet(fs *pflag.FlagSet) {
	if fs.Lookup("engine") != nil {
		return // already registered (persistent on root)
	}
	fs.StringVar(&engineFlags.engine, "engine", "", "force the engine instead of detecting it: vllm, sglang, tgi, llamacpp, trtllm, triton, ollama")
	fs.StringVar(&engineFlags.apiKey, "api-key", "", "API key sent as \"Authorization: Bearer …\" to the endpoints, never to another host or port (default $OPENAI_API_KEY, for the endpoints you name only); visible in ps: prefer --api-key-file")
	fs.StringVar(&apiKeyFile, "api-key-file", "", "`FILE` holding the API key (never printed)")
	fs.StringVar(&engineFlags.metricsPath, "metrics-path", "", "metrics route when not the engine's default, e.g. /metrics?model=ID")
	fs.DurationVar(&engineFlags.timeout, "timeout", engine.DefaultTimeout, "per-request timeout for the endpoints")
	fs.StringArrayVar(&engineFlags.tokenFiles, "token-file", nil, "`URL=FILE`: send the bearer token in FILE to that endpoint only, in place of --api-key (llm-d's picker wants one on its metrics port); repeat per endpoint; never printed")
	fs.BoolVar(&engineFlags.insecure, "insecure-skip-verify", false, "accept any TLS certificate from the endpoints (a cluster's own CA, self-signed): still encrypted, the server not checked")
	fs.BoolVar(&engineFlags.followRedirects, "follow-redirects", false, "follow redirects to other hosts too (by default only those on the endpoint's own host; the API key is never sent to another host)")
}

func engineTimeout() time.Duration {
	if engineFlags.timeout > 0 {
		return engineFlags.timeout
	}
	return engine.DefaultTimeout
}

// parseEngine accepts the engine names and their common spellings
// (engines/: each Spec's ID and Aliases).
func parseEngine(s string) (model.Engine, error) {
	if strings.TrimSpace(s) == "" {
		return model.Unknown, nil
	}
	if e, ok := engines.Parse(s); ok {
		return e, nil
	}
	ids := make([]string, 0, len(engines.IDs()))
	for _, e := range engines.IDs() {
		ids = append(ids, string(e))
	}
	return model.Unknown, usageErr("--engine %q: want one of %s", s, strings.Join(ids, ", "))
}

// engineConfig builds one endpoint's config from the flags.
func engineConfig(url string, interval time.Duration) (engine.Config, error) {
	eng, err := parseEngine(engineFlags.engine)
	if err != nil {
		return engine.Config{}, err
	}
	nameEndpoints(url) // watched: named by the person (arguments, config, this machine's ports)
	key, err := apiKeyFor(url, true)
	if err != nil {
		return engine.Config{}, err
	}
	tok, ok, err := tokenFor(url, engineFlags.tokenFiles)
	if err != nil {
		return engine.Config{}, err
	}
	if ok {
		key = tok
	}
	return engine.Config{
		URL: url, Engine: eng, Interval: interval, Timeout: engineTimeout(),
		APIKey: key, MetricsPath: engineFlags.metricsPath, FollowRedirects: engineFlags.followRedirects,
		InsecureSkipVerify: engineFlags.insecure,
	}, nil
}

func startEngines(ctx context.Context, env *session.Env) error {
	for _, u := range env.URLs {
		cfg, err := engineConfig(u, env.Interval)
		if err != nil {
			return err
		}
		p := engine.NewPoller(cfg)
		env.OnInterval = append(env.OnInterval, p.SetInterval)
		id := model.RedactURL(u) // the monitor's ID: what the screen shows
		var look *portLook
		if env.SimLog == nil { // the demo's engine lives in this process: /proc knows nothing of it
			look = newPortLook(id)
		}
		go p.Run(ctx, func(sc model.Scrape) {
			env.Send(withEndpoint(sc, id))
			if o, ok := look.after(sc); ok {
				env.Send(o)
			}
		})
	}
	return nil
}

// portLook asks /proc who holds a local endpoint's port while nothing
// answers there, at most every portLookEvery (the lifecycle then says
// "port 8000: held by PID 4711 …, loading for 38 s" or "nothing listens on
// 8000; no engine process found"). It is nil for a remote endpoint.
type portLook struct {
	id   string
	port int
	last time.Time
	up   bool
}

const portLookEvery = 5 * time.Second

func newPortLook(id string) *portLook {
	u, err := neturl.Parse(id)
	if err != nil {
		return nil
	}
	switch h := u.Hostname(); h {
	case "127.0.0.1", "localhost", "::1", "0.0.0.0":
	default:
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return nil
		}
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		if port = 80; u.Scheme == "https" {
			port = 443
		}
	}
	return &portLook{id: id, port: port}
}

func (p *portLook) after(sc model.Scrape) (model.PortOwner, bool) {
	if p == nil {
		return model.PortOwner{}, false
	}
	down := sc.ErrKind == model.ErrRefused || sc.ErrKind == model.ErrTimeout
	// Once when it comes up (the serving process's command line is its
	// run's configuration), then every portLookEvery while it is down.
	up := !down && !p.up
	p.up = !down
	if !up && (!down || sc.Time.Sub(p.last) < portLookEvery) {
		return model.PortOwner{}, false
	}
	p.last = sc.Time
	o := procfs.Owner(procfs.FS(), p.port, sc.Time)
	o.Endpoint = p.id
	return o, true
}

// withEndpoint tags a scrape with the monitor's ID for the endpoint (the
// URL as the monitor normalised it, which may still carry a metrics path).
func withEndpoint(sc model.Scrape, id string) model.Scrape {
	if sc.Endpoint == id {
		return sc
	}
	sc.Endpoint = id
	for i := range sc.Samples {
		sc.Samples[i].Endpoint = id
	}
	return sc
}

// foundURLs keeps the endpoints recognised as an engine: port 80 or 3000
// may well be some other web server.
func foundURLs(fs []probe.Found) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		if f.Identity.Engine != model.Unknown {
			out = append(out, f.URL)
		}
	}
	return out
}
