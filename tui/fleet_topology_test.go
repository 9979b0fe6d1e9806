package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// routedMsgs is a routed fleet at t, as the fleet source reads it: a
// production-stack router (classified, not read), two prefill workers and
// five decode workers of one model, two of the decode workers starved by
// the router while three are full (dynamo #7836's shape), the decode side
// handing KV over.
func routedMsgs(t time.Time, origins bool) []model.Input {
	var out []model.Input
	add := func(id, name string, role model.PDRole, running, waiting, kv float64, xfers float64) {
		if origins {
			out = append(out, model.Origin{Endpoint: id, Name: name, Source: model.SourcePrometheus})
		}
		d := &model.Derived{By: "prometheus", Window: time.Minute, Rates: map[model.Counter]float64{model.GenTokens: 40 * running, model.Requests: running / 10},
			Latency: map[model.Latency]model.Dist{model.TTFT: {P50: model.Some(0.1), P90: model.Some(0.2), P99: model.Some(0.3), Count: 100, Estimate: true}}}
		if role == model.RoleDecode {
			d.Latency[model.KVTransfer] = model.Dist{Mean: model.Some(0.04), Count: xfers, Exposed: true}
		}
		sm := model.Sample{Endpoint: id, Model: "qwen3-32b", Time: t, Source: model.FromScrape,
			Gauges: map[model.Gauge]float64{model.Running: running, model.Waiting: waiting, model.KVUsage: kv}, Derived: d}
		out = append(out, model.Scrape{Endpoint: id, Time: t, Identity: model.Identity{Engine: model.VLLM, Role: role, RoleFrom: "llm_isvc_role",
			Models: []model.ModelInfo{{ID: "qwen3-32b"}}}, Samples: []model.Sample{sm}})
	}
	if origins {
		out = append(out, model.Origin{Endpoint: "http://10.0.9.1:8001", Name: "prod/router", Source: model.SourcePrometheus})
	}
	out = append(out, model.Scrape{Endpoint: "http://10.0.9.1:8001", Time: t, Identity: model.Identity{Layer: "vLLM production-stack router (router)", LayerDetail: "7 servers, 7 healthy; 160 running by its count",
		Backends: []model.Backend{{Server: "http://10.0.2.1:8000", Healthy: 1, HealthyOK: true}}},
		Err: "http://10.0.9.1:8001 is a vLLM production-stack router (router), not an engine", ErrKind: model.ErrNotFound})
	add("http://10.0.1.1:8000", "prod/prefill-0", model.RolePrefill, 8, 3, 0.4, 0)
	add("http://10.0.1.2:8000", "prod/prefill-1", model.RolePrefill, 7, 2, 0.38, 0)
	for i, l := range [][3]float64{{48, 6, 1.0}, {47, 9, 0.99}, {50, 4, 1.0}, {0, 0, 0}, {0, 0, 0}} {
		add(fmt.Sprintf("http://10.0.2.%d:8000", i+1), fmt.Sprintf("prod/decode-%d", i), model.RoleDecode, l[0], l[1], l[2], 120*l[0]/48)
	}
	return out
}

func routedModel() *Model { return fleetAfterMinute(routedMsgs) }

// Issue 26: a routed fleet is shown router → pools → workers, each pool
// headed by its spread and the decode pool by its KV hand-over verdict; the
// starved decode pool's finding is on top of the view. At 80×24 too.
func TestGoldenRoutedFleet(t *testing.T) {
	for _, sz := range []struct {
		name string
		w, h int
	}{{"80x24", 80, 24}, {"120x40", 120, 40}} {
		t.Run(sz.name, func(t *testing.T) {
			m := routedModel()
			m.Update(tickMsg(t0.Add(63 * time.Second)))
			v := screen(t, m, sz.w, sz.h)
			for _, want := range []string{"▸ routers", "7 servers, 7 healthy", "▸ qwen3-32b · prefill · 2/2 serving", "▸ qwen3-32b · decode · 5/5 serving · KV handed over",
				"2 of 5 decode workers of qwen3-32b idle"} {
				if !strings.Contains(v, want) {
					t.Errorf("%s lacks %q", sz.name, want)
				}
			}
			if strings.Index(v, "▸ routers") > strings.Index(v, "· prefill ·") || strings.Index(v, "· prefill ·") > strings.Index(v, "· decode ·") {
				t.Errorf("not router → prefill → decode:\n%s", v)
			}
			golden(t, "fleet_routed_"+sz.name, v)
		})
	}
}

// A decode pool that exposes the transfer histogram but counted none over
// a whole window while it finished requests is said not to disaggregate;
// one without the histogram gets no verdict (absent is not zero).
func TestKVVerdict(t *testing.T) {
	d := &Data{Window: time.Minute}
	served := fleetRow{xfer: model.Dist{Exposed: true, Count: 0}, reqs: model.Some(2)}
	if got := kvVerdict(d, []*fleetRow{&served}); !strings.Contains(got, "not disaggregating") {
		t.Errorf("exposed, zero, serving: %q", got)
	}
	young := served
	young.young = true
	if got := kvVerdict(d, []*fleetRow{&young}); got != "KV hand-over: no verdict yet" {
		t.Errorf("young: %q", got)
	}
	if got := kvVerdict(d, []*fleetRow{{}}); got != "KV hand-over: not exposed" {
		t.Errorf("absent: %q", got)
	}
	// SGLang observes its hand-overs on the prefill (sending) instance: a
	// decode pool of SGLang engines counting none is no evidence that it
	// does not disaggregate.
	sg := served
	sg.kvSent = true
	if got := kvVerdict(d, []*fleetRow{&sg}); got != "KV hand-over: counted on the prefill side" {
		t.Errorf("SGLang decode, zero: %q", got)
	}
	sg.xfer = model.Dist{}
	if got := kvVerdict(d, []*fleetRow{&sg}); got != "KV hand-over: counted on the prefill side" {
		t.Errorf("SGLang decode, not exposed: %q", got)
	}
}

// The router of a routed fleet is ROUTER wherever an endpoint's badge is
// shown, as the fleet calls it: its "not an engine" scrape error read
// DEGRADED in the header's "also:" list.
func TestRouterBadgeIsRouterNotDegraded(t *testing.T) {
	m := routedModel()
	m.Update(tickMsg(t0.Add(63 * time.Second)))
	m.Update(press("esc")) // the fleet opens first
	v := screen(t, m, 250, 40)
	if !strings.Contains(v, "http://10.0.9.1:8001 ROUTER") || strings.Contains(v, "DEGRADED") {
		t.Errorf("the router's badge, want ROUTER:\n%s", v)
	}
}

// Tenants are said only where a layer counts them: the routed fleet's
// production-stack router labels no request by tenant ("no tenant
// source"); a LiteLLM proxy in front that does shows its tenants instead.
func TestFleetTenantsOnlyFromASource(t *testing.T) {
	m := routedModel()
	m.Update(tickMsg(t0.Add(63 * time.Second)))
	if v := screen(t, m, 160, 40); !strings.Contains(v, "no tenant source") || strings.Contains(v, "not judged yet") {
		t.Errorf("a router without tenant labels does not say so:\n%s", v)
	}
	withProxy := func(tm time.Time, origins bool) []model.Input {
		out := routedMsgs(tm, origins)
		for i, in := range out {
			if sc, ok := in.(model.Scrape); ok && sc.Endpoint == "http://10.0.9.1:8001" {
				sc.Identity = model.Identity{Layer: "LiteLLM proxy (proxy)", LayerDetail: "by team since start: search 42 req (2 failed), 12000 tok",
					Tenants: []model.Tenant{{Kind: "team", Name: "search", Requests: 42, Failed: 2, Tokens: 12000, TokensOK: true}}}
				sc.Err = "http://10.0.9.1:8001 is a LiteLLM proxy (proxy), not an engine"
				out[i] = sc
			}
		}
		return out
	}
	m = fleetAfterMinute(withProxy)
	m.Update(tickMsg(t0.Add(63 * time.Second)))
	v := screen(t, m, 160, 40)
	if !strings.Contains(v, "by team since start: search 42 req (2 failed)") || strings.Contains(v, "no tenant source") {
		t.Errorf("the proxy's tenants, and no 'no tenant source':\n%s", v)
	}
}

// A router's own overhead is on its line beside the engines' TTFT99, and
// its row is its own (issue 26): no layer name under MODEL, no row of
// engine numbers "--"; a router that reports no overhead says "not
// reported", never a zero.
func TestFleetRouterOverheadBesideEnginesTTFT(t *testing.T) {
	withOverhead := func(o *model.RouterOverhead) func(time.Time, bool) []model.Input {
		return func(at time.Time, origins bool) []model.Input {
			msgs := routedMsgs(at, origins)
			for i, m := range msgs {
				if sc, ok := m.(model.Scrape); ok && sc.Identity.Layer != "" {
					sc.Identity.Layer, sc.Identity.LayerDetail, sc.Identity.Backends = "NVIDIA Dynamo frontend (router)", "", nil
					sc.Identity.Overhead = o
					msgs[i] = sc
				}
			}
			return msgs
		}
	}
	m := fleetAfterMinute(withOverhead(&model.RouterOverhead{Metric: "dynamo_router_overhead_total_ms", Mean: 0.12, Requests: 600, Window: time.Minute,
		TTFTMetric: "dynamo_frontend_time_to_first_token_seconds", TTFTMean: 0.2, TTFTRequests: 600, TTFTIncludes: true}))
	v := screen(t, m, 160, 40)
	if !strings.Contains(v, "▸ routers · own overhead 120ms/req (60% of TTFT 200ms) over 1m · engines' TTFT99 300ms") {
		t.Errorf("the routers line lacks the overhead beside the engines' TTFT:\n%s", v)
	}
	var row string
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "prod/router") {
			row = l
		}
	}
	if !strings.Contains(row, "layer: NVIDIA Dynamo frontend") || strings.Contains(row, "--") {
		t.Errorf("the router's row: %q", row)
	}
	m = fleetAfterMinute(func(at time.Time, origins bool) []model.Input {
		msgs := routedMsgs(at, origins)
		for i, m := range msgs {
			if sc, ok := m.(model.Scrape); ok && sc.Identity.Layer != "" {
				sc.Identity.Overhead = &model.RouterOverhead{Missing: "the vLLM production-stack router reports no latency of its own"}
				msgs[i] = sc
			}
		}
		return msgs
	})
	// its word on its engines first, then that it reports no overhead
	if v := screen(t, m, 160, 40); !strings.Contains(v, "▸ routers · 7 servers, 7 healthy; 160 running by its count · own overhead not reported") || strings.Contains(v, "own overhead 0") {
		t.Errorf("a router without an overhead metric:\n%s", v)
	}
}

// The fleet view's finding lines followed the report's rank (newest
// opened first, a finding whose condition flickered below the rest): two
// frames a second apart showed them in another order. They are shown by
// severity, then rule and endpoint, whatever order the report holds.
func TestFleetFindingsKeepTheirOrder(t *testing.T) {
	mk := func(id, ep string, sev model.Severity, opened int, clear bool) diagnosis.Finding {
		f := diagnosis.Finding{ID: id, Endpoint: ep, Severity: sev, Title: id + " " + ep, Opened: t0.Add(time.Duration(opened) * time.Second)}
		if clear {
			f.ClearSince = t0.Add(time.Minute)
		}
		return f
	}
	frame1 := []diagnosis.Finding{mk("pool_starved", "http://d3", model.SevCrit, 10, false), mk("pool_starved", "http://p1", model.SevCrit, 5, false),
		mk("replica_outlier", "http://d0", model.SevWarn, 1, false), mk("kv_pressure", "http://d0", model.SevCrit, 1, false)}
	// a second later: the prefill pool's condition clears for a moment
	// (ranked after the others) and the outlier reopens, newest
	frame2 := []diagnosis.Finding{mk("pool_starved", "http://d3", model.SevCrit, 10, false), mk("replica_outlier", "http://d0", model.SevWarn, 12, false),
		mk("pool_starved", "http://p1", model.SevCrit, 5, true)}
	titles := func(fs []diagnosis.Finding) string {
		var ts []string
		for _, f := range fleetFindings(fs) {
			ts = append(ts, f.Title)
		}
		return strings.Join(ts, " | ")
	}
	want := "pool_starved http://d3 | pool_starved http://p1 | replica_outlier http://d0"
	if a, b := titles(frame1), titles(frame2); a != want || b != want {
		t.Errorf("frame 1: %s\nframe 2: %s\nwant:    %s", a, b, want)
	}
}

// pool_starved is about every idle worker of its pool, but it named the
// first as its endpoint and the fleet view showed it on that row only:
// decode-4, as idle as decode-3, read "TTFT over SLO" beside the loaded
// ones. The finding's other endpoints (diagnosis.Finding.Others) carry it
// onto their rows.
func TestFleetStarvedPoolOnEveryIdleWorker(t *testing.T) {
	m := routedModel()
	m.Update(tickMsg(t0.Add(63 * time.Second)))
	v := screen(t, m, 120, 40)
	for _, w := range []string{"prod/decode-3", "prod/decode-4"} {
		i := strings.Index(v, w)
		if i < 0 {
			t.Fatalf("no %s row:\n%s", w, v)
		}
		row, _, _ := strings.Cut(v[i:], "\n")
		if !strings.Contains(row, "2 of 5 decode") {
			t.Errorf("idle worker's row without the starved pool's finding: %q", row)
		}
	}
	for _, w := range []string{"prod/decode-0", "prod/decode-2"} {
		row, _, _ := strings.Cut(v[strings.Index(v, w):], "\n")
		if strings.Contains(row, "2 of 5 decode") {
			t.Errorf("a loaded worker's row shows the idle workers' finding: %q", row)
		}
	}
}

// The count of hand-overs is over the span the pool's numbers cover, not
// the window asked for: six seconds into the routed demo the decode pool
// read "KV handed over: 287 in 1m".
func TestKVVerdictSaysTheSpanSeen(t *testing.T) {
	d := &Data{Window: time.Minute}
	a := fleetRow{xfer: model.Dist{Exposed: true, Count: 200, Window: 6 * time.Second}, reqs: model.Some(2), young: true}
	b := fleetRow{xfer: model.Dist{Exposed: true, Count: 87, Window: 5 * time.Second}, reqs: model.Some(2), young: true}
	if got, want := kvVerdict(d, []*fleetRow{&a, &b}), "KV handed over: 287 in "+fmtDur(6*time.Second); got != want {
		t.Errorf("young pool: %q, want %q", got, want)
	}
	a.xfer.Window, b.xfer.Window = 0, 0 // a span not known: the window's
	if got, want := kvVerdict(d, []*fleetRow{&a, &b}), "KV handed over: 287 in 1m"; got != want {
		t.Errorf("span unknown: %q, want %q", got, want)
	}
}

// A prefill pool's heading says how many prompt tokens its members read:
// their TOK/S column (generated tokens) read ~10 in make run-routed, a
// prefill instance answering with one token, with nothing on screen of
// the ~5 000 prompt tokens a second each was reading.
func TestPrefillPoolSaysPromptTokens(t *testing.T) {
	d := &Data{Window: time.Minute}
	v := &fleetView{rows: []fleetRow{
		{poolKey: "p", state: "serving", promptTPS: model.Some(5085), tps: model.Some(9.8)},
		{poolKey: "p", state: "serving", promptTPS: model.Some(5400), tps: model.Some(10.1)},
	}}
	if got := v.poolLine(d, "p", "m · prefill"); !strings.HasSuffix(got, "· prompt 5085–5400 tok/s") {
		t.Errorf("prefill pool heading: %q", got)
	}
	v.rows[0].promptTPS, v.rows[1].promptTPS = model.Opt{}, model.Opt{}
	if got := v.poolLine(d, "p", "m · prefill"); !strings.HasSuffix(got, "· prompt -- tok/s") {
		t.Errorf("prefill pool heading, prompt rate unknown: %q", got)
	}
	if got := v.poolLine(d, "p", "m · decode"); strings.Contains(got, "prompt") {
		t.Errorf("a decode pool's heading names prompt tokens: %q", got)
	}
}
