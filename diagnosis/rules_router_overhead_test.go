package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// overheadRouter is a router endpoint whose layer reports o.
func overheadRouter(layer string, o *model.RouterOverhead) Endpoint {
	return ep(func(e *Endpoint) {
		e.URL, e.Scrape.Endpoint = "http://frontend:8000", "http://frontend:8000"
		e.Scrape.ErrKind, e.Scrape.Err = model.ErrNotFound, "http://frontend:8000/metrics is a "+layer+", not an engine"
		e.Identity.Layer = layer
		e.Identity.Overhead = o
		e.State = model.State{}
	})
}

func dynamoOverhead(mean, ttft float64) *model.RouterOverhead {
	return &model.RouterOverhead{Metric: "dynamo_router_overhead_total_ms", Mean: mean, Requests: 600, Window: time.Minute,
		TTFTMetric: "dynamo_frontend_time_to_first_token_seconds", TTFTMean: ttft, TTFTRequests: 600, TTFTIncludes: true}
}

// overheadWatch feeds the Diagnoser the router (and an engine) every 2 s
// for d and returns the report then.
func overheadWatch(d time.Duration, eps func() []Endpoint) Report {
	dg := NewDiagnoser(DefaultConfig())
	var rep Report
	for s := 0; s <= int(d/time.Second); s += 2 {
		now := t0.Add(time.Duration(s) * time.Second)
		all := eps()
		for i := range all {
			all[i].Scrape.Time, all[i].State.Time = now, now
		}
		rep = dg.Update(Input{Time: now, Endpoints: all})
	}
	return rep
}

// A KV router taking 150 ms of a 250 ms time to first token (its
// frontend's, which contains it) is the finding, held route_hold, with the
// numbers and Dynamo's own knobs; 3.5 ms of 320 ms is not, and neither is
// a large share of a tiny TTFT (5 ms of 8 ms: under route_overhead_min).
func TestRouterOverheadShareOfTTFT(t *testing.T) {
	engine := member("http://10.0.0.11:8000", "", 4, 0, 0.4)
	rep := overheadWatch(40*time.Second, func() []Endpoint {
		return []Endpoint{overheadRouter("NVIDIA Dynamo frontend (router)", dynamoOverhead(0.150, 0.250)), engine}
	})
	f := open(rep, "router_overhead")
	if f == nil {
		t.Fatalf("no router_overhead: %+v", rep.Findings)
	}
	text := f.Title
	for _, ev := range f.Evidence {
		text += "\n" + ev.Text + " [" + ev.Source + "]"
	}
	for _, w := range []string{"150 ms per request", "60 %", "250 ms (which includes it)", "in the last 1m0s", "dynamo_router_overhead_total_ms", "dynamo_frontend_time_to_first_token_seconds"} {
		if !strings.Contains(text, w) {
			t.Errorf("finding does not say %q:\n%s", w, text)
		}
	}
	if len(f.Actions) < 2 || !strings.Contains(f.Actions[0].Change, "dynamo.frontend replicas") || !strings.Contains(f.Actions[1].Change, "--router-mode round-robin") {
		t.Errorf("actions %+v", f.Actions)
	}
	for _, c := range []struct {
		name       string
		mean, ttft float64
	}{{"3.5 ms of 320 ms", 0.0035, 0.320}, {"5 ms of 8 ms", 0.005, 0.008}} {
		rep := overheadWatch(40*time.Second, func() []Endpoint {
			return []Endpoint{overheadRouter("NVIDIA Dynamo frontend (router)", dynamoOverhead(c.mean, c.ttft)), engine}
		})
		if f := open(rep, "router_overhead"); f != nil {
			t.Errorf("%s: %s", c.name, f.Title)
		}
		if !strings.Contains(strings.Join(rep.Checked, "\n"), "no router or proxy adds a large share") {
			t.Errorf("%s: not listed as checked: %q", c.name, rep.Checked)
		}
	}
}

// Where the router reports no overhead, or no request in the window, or
// (LiteLLM) no streaming call's TTFT, the check says "not checked,
// because …" and is not listed as passed; no router at all: the input is
// missing.
func TestRouterOverheadNotChecked(t *testing.T) {
	engine := member("http://10.0.0.11:8000", "", 4, 0, 0.4)
	litellm := &model.RouterOverhead{Metric: "litellm_overhead_latency_metric", Mean: 0.002, Requests: 40, Window: time.Minute,
		TTFTMetric: "litellm_llm_api_time_to_first_token_metric"}
	for _, c := range []struct {
		name string
		o    *model.RouterOverhead
		want string
	}{
		{"prodstack", &model.RouterOverhead{Missing: "the vLLM production-stack router reports no latency of its own"}, "router overhead not checked: the vLLM production-stack router reports no latency of its own"},
		{"idle", &model.RouterOverhead{Metric: "dynamo_router_overhead_total_ms", Window: time.Minute, TTFTMetric: "dynamo_frontend_time_to_first_token_seconds"}, "counted no request in the last 1m0s"},
		{"no streaming", litellm, "streaming calls only"},
	} {
		rep := overheadWatch(30*time.Second, func() []Endpoint { return []Endpoint{overheadRouter("x (router)", c.o), engine} })
		if open(rep, "router_overhead") != nil {
			t.Errorf("%s: a finding from nothing", c.name)
		}
		if !strings.Contains(strings.Join(rep.Missing, "\n"), c.want) {
			t.Errorf("%s: missing %q, want %q", c.name, rep.Missing, c.want)
		}
		if strings.Contains(strings.Join(rep.Checked, "\n"), "no router or proxy adds") {
			t.Errorf("%s: listed as checked", c.name)
		}
	}
}
