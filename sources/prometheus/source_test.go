package prometheus

import (
	"context"
	"encoding/base64"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

func newFake(t testing.TB, f *fakeProm, cfg Config) *Source {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	if cfg.URL == "" {
		cfg.URL = srv.URL
	} else {
		cfg.URL = strings.Replace(cfg.URL, "SERVER", strings.TrimPrefix(srv.URL, "http://"), 1)
	}
	if cfg.Window == 0 {
		cfg.Window = 5 * time.Minute
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func feed(r Refresh, mon *core.Monitor) {
	for _, m := range r.Msgs {
		mon.Apply(m)
	}
	mon.Evaluate(r.Time)
}

func TestRefreshFindsTheFleetAndItsNumbers(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	for i := range 3 {
		e := vllmEP(i, "prod", "llama-3-8b", 0.3, 0, 0.2)
		f.eps = append(f.eps, e)
		f.up[e.labels["instance"]] = 1
	}
	f.eps[2].values["gauge:kv_cache_usage_ratio"] = 0.97
	f.eps[1].values["lat:ttft:p99"] = math.NaN() // no request in the window
	s := newFake(t, f, Config{})
	r := s.Refresh(context.Background(), time.Now())
	if r.Err != "" || r.Targets != 3 {
		t.Fatalf("err %q targets %d", r.Err, r.Targets)
	}
	// one state query per engine family, the latencies of the one
	// family found and the routers' own word (up{} once targets are
	// known: see below)
	if r.Queries != len(families)+2 {
		t.Errorf("queries = %d, want %d", r.Queries, len(families)+2)
	}
	mon := core.New(core.Options{Window: 5 * time.Minute})
	feed(r, mon)
	if got := mon.URLs(); len(got) != 3 || got[0] != "http://10.0.0.0:8000" {
		t.Fatalf("endpoints %v", got)
	}
	e := mon.Endpoint("http://10.0.0.2:8000")
	if e.Name() != "prod/vllm-2" || e.Origin.Source != model.SourcePrometheus || len(e.Origin.Missing) == 0 {
		t.Errorf("origin %+v", e.Origin)
	}
	if e.Identity.Engine != model.VLLM || e.Life != model.LifeServing {
		t.Errorf("identity %+v life %s", e.Identity, e.Life)
	}
	st := mon.Store().State(model.Key{Endpoint: "http://10.0.0.2:8000", Model: "llama-3-8b"}, 5*time.Minute)
	if st.KVUsage != model.Some(0.97) || st.GenTPS != model.Some(950.5) || st.RateWindow != 5*time.Minute {
		t.Errorf("state kv %v gen %v rate window %v", st.KVUsage, st.GenTPS, st.RateWindow)
	}
	ttft := st.Latency[model.TTFT]
	if ttft.P99 != model.Some(0.2) || !ttft.Estimate || ttft.Window != 5*time.Minute || !strings.Contains(ttft.Approx, "prometheus") {
		t.Errorf("ttft %+v", ttft)
	}
	st1 := mon.Store().State(model.Key{Endpoint: "http://10.0.0.1:8000", Model: "llama-3-8b"}, 5*time.Minute)
	if st1.Latency[model.TTFT].P99.OK {
		t.Errorf("NaN from histogram_quantile became %v, want unknown", st1.Latency[model.TTFT].P99)
	}
	if st1.Latency[model.Prefill].Exposed {
		t.Errorf("a latency Prometheus did not return is shown: %+v", st1.Latency[model.E2E])
	}
	doc := mon.Snapshot()
	if len(doc.Endpoints) != 3 || doc.Endpoints[0].Source != "prometheus" || doc.Endpoints[0].Name != "prod/vllm-0" {
		t.Errorf("snapshot %+v", doc.Endpoints[0])
	}
}

func TestQueriesDoNotGrowWithTheFleet(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	for i := range 200 {
		e := vllmEP(i, "prod", "m", 0.3, 0, 0.2)
		f.eps = append(f.eps, e)
		f.up[e.labels["instance"]] = 1
	}
	s := newFake(t, f, Config{Match: `namespace="prod"`})
	s.Refresh(context.Background(), time.Now())
	f.queries.Store(0)
	r := s.Refresh(context.Background(), time.Now())
	if r.Targets != 200 || r.Queries != len(families)+3 || f.queries.Load() != int64(len(families)+3) {
		t.Fatalf("targets %d, queries %d (server saw %d)", r.Targets, r.Queries, f.queries.Load())
	}
	if q := upQuery(`namespace="prod"`, s.knownJobs()); q != `up{namespace="prod",job=~"^(?:vllm)$"}` {
		t.Errorf("up{} asked as %s", q)
	}
}

func TestTargetsThatLeaveOrFailAreShownSo(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	for i := range 3 {
		e := vllmEP(i, "prod", "m", 0.3, 0, 0.2)
		f.eps = append(f.eps, e)
		f.up[e.labels["instance"]] = 1
	}
	s := newFake(t, f, Config{})
	mon := core.New(core.Options{Window: 5 * time.Minute})
	t0 := time.Now()
	feed(s.Refresh(context.Background(), t0), mon)
	// pod 1 deleted (gone from the targets), pod 2's scrapes fail (up=0)
	f.mu.Lock()
	delete(f.up, f.eps[1].labels["instance"])
	f.up[f.eps[2].labels["instance"]] = 0
	f.eps = f.eps[:1]
	f.mu.Unlock()
	r := s.Refresh(context.Background(), t0.Add(5*time.Second))
	if r.Gone != 1 {
		t.Fatalf("gone %d", r.Gone)
	}
	feed(r, mon)
	gone := mon.Endpoint("http://10.0.0.1:8000")
	if gone.Life != model.LifeGone || !strings.Contains(gone.LifeDetail, "no longer among") {
		t.Errorf("gone target: life %s %q", gone.Life, gone.LifeDetail)
	}
	if st := mon.Store().State(model.Key{Endpoint: gone.URL, Model: "m"}, time.Minute); st.KVUsage.OK {
		t.Errorf("a gone target keeps its old KV %v", st.KVUsage)
	}
	failing := mon.Endpoint("http://10.0.0.2:8000")
	if failing.Life != model.LifeUnreachable || !strings.Contains(failing.Err, "up=0") {
		t.Errorf("up=0 target: life %s err %q", failing.Life, failing.Err)
	}
	// a later refresh does not repeat the gone message
	if r := s.Refresh(context.Background(), t0.Add(10*time.Second)); r.Gone != 0 {
		t.Errorf("gone announced again: %d", r.Gone)
	}
	// the pod comes back (a target with the same instance): serving again,
	// in a new run
	f.mu.Lock()
	back := vllmEP(1, "prod", "m", 0.3, 0, 0.2)
	f.eps = append(f.eps, back)
	f.up[back.labels["instance"]] = 1
	f.mu.Unlock()
	feed(s.Refresh(context.Background(), t0.Add(15*time.Second)), mon)
	if gone.Life != model.LifeServing || gone.Err != "" || len(gone.Runs) != 2 || gone.Origin.Gone {
		t.Errorf("a target back: life %s err %q runs %d origin %+v", gone.Life, gone.Err, len(gone.Runs), gone.Origin)
	}
}

func TestPrometheusErrorsAreClearAndKeepSecrets(t *testing.T) {
	const pw, token = "hunter2-secret", "tok-abcdef-123"
	cases := []struct {
		name string
		f    *fakeProm
		cfg  Config
		want string
	}{
		{"bad data", &fakeProm{status: 400, errType: "bad_data"}, Config{}, "check --match"},
		{"server error", &fakeProm{status: 503, errType: "unavailable"}, Config{}, "Prometheus"},
		{"wrong password", &fakeProm{auth: "Basic nope"}, Config{URL: "http://admin:" + pw + "@SERVER"}, "401"},
		{"wrong token", &fakeProm{auth: "Bearer nope"}, Config{Bearer: token}, "--prometheus-bearer-token-file"},
		{"slow", &fakeProm{delay: 1500 * time.Millisecond}, Config{Timeout: 300 * time.Millisecond, User: "u", Password: pw}, "did not answer within 300ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newFake(t, c.f, c.cfg)
			start := time.Now()
			r := s.Refresh(context.Background(), time.Now())
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("refresh took %s: a slow Prometheus must not freeze it", took)
			}
			if !strings.Contains(r.Err, c.want) {
				t.Errorf("err %q, want it to say %q", r.Err, c.want)
			}
			for _, secret := range []string{pw, token} {
				if strings.Contains(r.Err, secret) || strings.Contains(s.URL(), secret) {
					t.Errorf("secret printed: %q / %q", r.Err, s.URL())
				}
			}
		})
	}
}

func TestAnOversizedAnswerIsRefused(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	for i := range 50 {
		f.eps = append(f.eps, vllmEP(i, "prod", "m", 0.3, 0, 0.2))
	}
	s := newFake(t, f, Config{maxBytes: 16 << 10})
	r := s.Refresh(context.Background(), time.Now())
	if !strings.Contains(r.Err, "answers are over 16 KiB together this refresh: narrow --match") || r.Targets != 0 {
		t.Errorf("err %q", r.Err)
	}
}

func TestCredentialsAreSent(t *testing.T) {
	e := vllmEP(0, "prod", "m", 0.3, 0, 0.2)
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:pw"))
	f := &fakeProm{auth: want, eps: []fakeEP{e}, up: map[string]float64{e.labels["instance"]: 1}}
	s := newFake(t, f, Config{User: "admin", Password: "pw"})
	if r := s.Refresh(context.Background(), time.Now()); r.Err != "" || r.Targets != 1 {
		t.Fatalf("basic auth: err %q targets %d", r.Err, r.Targets)
	}
	f.auth = "Bearer t0k"
	f.cache = nil
	s = newFake(t, f, Config{Bearer: "t0k"})
	if r := s.Refresh(context.Background(), time.Now()); r.Err != "" || r.Targets != 1 {
		t.Fatalf("bearer: err %q targets %d", r.Err, r.Targets)
	}
}

func TestOutsideTextIsCleanedAndWarningsKept(t *testing.T) {
	e := vllmEP(0, "prod\x1b[31m", "llama\x1b]0;pwned\x07-8b", 0.3, 0, 0.2)
	f := &fakeProm{eps: []fakeEP{e}, up: map[string]float64{e.labels["instance"]: 1},
		warnings: []string{"PromQL info: metric might not be a counter"}}
	s := newFake(t, f, Config{})
	r := s.Refresh(context.Background(), time.Now())
	mon := core.New(core.Options{Window: 5 * time.Minute})
	feed(r, mon)
	doc := mon.Snapshot()
	if len(doc.Endpoints) != 1 {
		t.Fatalf("endpoints %+v", doc.Endpoints)
	}
	ej := doc.Endpoints[0]
	for _, s := range []string{ej.Name, ej.Model, strings.Join(ej.Models, " ")} {
		if model.Unsafe(s) || strings.Contains(s, "\x1b") || strings.Contains(s, "\x07") {
			t.Errorf("unsanitised text %q", s)
		}
	}
	if len(r.Warnings) != 1 || !strings.Contains(strings.Join(ej.Notes, " "), "Prometheus warns") {
		t.Errorf("warnings %v notes %v", r.Warnings, ej.Notes)
	}
}

func TestMatchIsValidated(t *testing.T) {
	for _, m := range []string{`namespace="prod"`, `{namespace="prod",job=~"vllm-.*"}`, ``, `job=~"vllm-(a|b)[0-9]{2}"`, `pod!~"x\"}y"`} {
		if _, err := normMatch(m); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	for _, m := range []string{`sum(up)`, `namespace="prod`, `a="b"} or vector(1) or {c="d"`} {
		if _, err := normMatch(m); err == nil {
			t.Errorf("%s accepted", m)
		}
	}
	if _, err := New(Config{URL: "prometheus:9090"}); err == nil || !strings.Contains(err.Error(), "http://prometheus:9090") {
		t.Errorf("a URL without scheme: %v", err)
	}
}

func TestARestartInsideTheWindowHidesPercentiles(t *testing.T) {
	e := vllmEP(0, "prod", "m", 0.3, 0, 0.2)
	now := time.Now()
	e.values["started"] = float64(now.Add(-90 * time.Second).Unix())
	f := &fakeProm{eps: []fakeEP{e}, up: map[string]float64{e.labels["instance"]: 1}}
	s := newFake(t, f, Config{})
	r := s.Refresh(context.Background(), now)
	mon := core.New(core.Options{Window: 5 * time.Minute})
	feed(r, mon)
	st := mon.Store().State(model.Key{Endpoint: "http://10.0.0.0:8000", Model: "m"}, 5*time.Minute)
	if st.Latency[model.TTFT].P99.OK || !strings.Contains(strings.Join(st.Notes, " "), "restarted") {
		t.Errorf("percentiles across a restart: %+v notes %v", st.Latency[model.TTFT], st.Notes)
	}
	if st.GenTPS != model.Some(950.5) || st.Started.IsZero() {
		t.Errorf("rates or start lost: %v %v", st.GenTPS, st.Started)
	}
}
