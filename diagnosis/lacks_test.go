package diagnosis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func lackEnv(n int) *env {
	e := &env{}
	for i := range n {
		e.in.Endpoints = append(e.in.Endpoints, Endpoint{URL: fmt.Sprintf("http://10.0.0.%d:8000", i)})
	}
	e.all = e.in.Endpoints
	return e
}

// A fleet's lacks shared by many replicas read as one line each, naming how
// many and the first few; what few endpoints lack keeps its own lines, in
// the order the rules met them.
func TestLackLinesGroupAFleet(t *testing.T) {
	e := lackEnv(12)
	// arrived in another order: the line names the first in URL order,
	// read as a person counts (10.0.0.2 before 10.0.0.10)
	slices.Reverse(e.in.Endpoints)
	at := func(i int) *Endpoint { return &e.in.Endpoints[11-i] }
	for i := range e.in.Endpoints {
		e.lack(&e.in.Endpoints[i], "health (no health route answered)")
	}
	e.lack(at(4), "KV-cache usage (vLLM does not expose it)")
	e.lack(at(2), "KV-cache usage (vLLM does not expose it)")
	for _, i := range []int{10, 3, 2, 11, 9} {
		e.lack(at(i), "TTFT (no request got its first token in the window)")
		e.lack(at(i), "TTFT (no request got its first token in the window)") // twice: counted once
	}
	e.lacks = append(e.lacks, lack{what: "behaviour probe: not run in this run (press o, or llmtop probe URL)"}, lack{what: "behaviour probe: not run in this run (press o, or llmtop probe URL)"})
	got := e.lackLines()
	want := []string{
		"all 12 endpoints (http://10.0.0.0:8000, http://10.0.0.1:8000, http://10.0.0.2:8000 and 9 more): health (no health route answered)",
		"http://10.0.0.4:8000: KV-cache usage (vLLM does not expose it)",
		"http://10.0.0.2:8000: KV-cache usage (vLLM does not expose it)",
		"5 of 12 endpoints (http://10.0.0.2:8000, http://10.0.0.3:8000, http://10.0.0.9:8000 and 2 more): TTFT (no request got its first token in the window)",
		"behaviour probe: not run in this run (press o, or llmtop probe URL)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range want[:4] {
		if !PerEndpoint(l) {
			t.Errorf("PerEndpoint(%q) = false", l)
		}
	}
	for _, l := range []string{want[4], "GPU readings (no NVML driver or --no-gpu)", "replicas (fewer than two endpoints serve the same model)"} {
		if PerEndpoint(l) {
			t.Errorf("PerEndpoint(%q) = true", l)
		}
	}
}

// Below lackGroupMin endpoints the lines read as they always did: one per
// endpoint and input, in the rules' order, each once.
func TestLackLinesFewEndpointsUnchanged(t *testing.T) {
	e := lackEnv(3)
	for i := range e.in.Endpoints {
		e.lack(&e.in.Endpoints[i], "health (no health route answered)")
		e.lack(&e.in.Endpoints[i], "TTFT (no request got its first token in the window)")
	}
	e.lack(&e.in.Endpoints[1], "health (no health route answered)")
	var want []string
	for _, l := range e.lacks[:6] {
		want = append(want, l.url+": "+l.what)
	}
	if got := e.lackLines(); !slices.Equal(got, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The report of a fleet whose every replica lacks the same inputs says so
// once per input, not once per replica; one endpoint's report still names
// its URL.
func TestReportNotCheckedOncePerInputForAFleet(t *testing.T) {
	var eps []Endpoint
	for i := range 50 {
		u := fmt.Sprintf("http://10.0.1.%d:8000", i)
		eps = append(eps, ep(func(e *Endpoint) { e.URL, e.Scrape.Endpoint, e.State.Key.Endpoint = u, u, u }))
	}
	rep := Evaluate(input(eps...), DefaultConfig())
	if len(rep.Missing) > 30 {
		t.Fatalf("%d not-checked lines for 50 replicas:\n%s", len(rep.Missing), strings.Join(rep.Missing, "\n"))
	}
	found := false
	for _, m := range rep.Missing {
		if strings.HasPrefix(m, "http://") {
			t.Errorf("a replica's own line in a fleet whose replicas all lack the same: %q", m)
		}
		found = found || strings.HasPrefix(m, "all 50 endpoints (http://10.0.1.0:8000, http://10.0.1.1:8000, http://10.0.1.2:8000 and 47 more): ")
	}
	if !found {
		t.Errorf("no line for all 50 endpoints:\n%s", strings.Join(rep.Missing, "\n"))
	}
	one := Evaluate(input(eps[0]), DefaultConfig())
	perURL := 0
	for _, m := range one.Missing {
		if strings.HasPrefix(m, "http://10.0.1.0:8000: ") {
			perURL++
		}
	}
	if perURL == 0 {
		t.Errorf("one endpoint's lines do not name it:\n%s", strings.Join(one.Missing, "\n"))
	}
}

func TestNaturalLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"http://10.0.0.2:8000", "http://10.0.0.10:8000", true},
		{"http://10.0.0.10:8000", "http://10.0.0.2:8000", false},
		{"http://10.0.0.19:8000", "http://10.0.0.100:8000", true},
		{"http://10.0.0.7:8000", "http://10.0.0.7:8001", true},
		{"http://10.0.0.7:8000", "http://10.0.0.7:8000", false},
		{"http://a", "http://b", true},
		{"http://a", "http://a/x", true},
		{"x007", "x8", true},
		{"x08", "x7", false},
		{"", "a", true},
	} {
		if got := naturalLess(c.a, c.b); got != c.less {
			t.Errorf("naturalLess(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// Two llama-servers serve the same GGUF, one started without --metrics:
// the replica checks say so, not "fewer than two endpoints serve the same
// model", which was untrue.
func TestReplicasLineSaysWhoHasNoMetrics(t *testing.T) {
	const dark = "http://127.0.0.1:8081"
	lit := ep(func(e *Endpoint) {
		e.Identity.Engine, e.Identity.Models = model.LlamaCpp, []model.ModelInfo{{ID: "small.gguf"}}
		e.State.Key.Model = "small.gguf"
	})
	off := ep(func(e *Endpoint) {
		e.URL, e.Identity.Engine, e.Identity.Models = dark, model.LlamaCpp, []model.ModelInfo{{ID: "small.gguf"}}
		e.State, e.LastOK = model.State{}, time.Time{}
		e.Scrape = model.Scrape{Endpoint: dark, Time: t0, Err: dark + "/metrics: 501 Not Implemented", ErrKind: model.ErrServer}
	})
	want := "replicas (2 endpoints serve small.gguf, but " + dark + " has no metrics, so they are not compared: that needs two with metrics)"
	rep := Evaluate(input(lit, off), DefaultConfig())
	if !slices.Contains(rep.Missing, want) {
		t.Errorf("missing:\n%s\nwant the line %q", strings.Join(rep.Missing, "\n"), want)
	}
	if got := MissingReason(want); got != "no_replicas" {
		t.Errorf("MissingReason = %q, want no_replicas", got)
	}
	// A router without metrics in front of one engine: no replica.
	router := ep(func(e *Endpoint) {
		e.URL, e.Identity.Layer, e.Identity.Models = dark, "vllm-router", []model.ModelInfo{{ID: "small.gguf"}}
		e.State, e.LastOK = model.State{}, time.Time{}
	})
	if rep := Evaluate(input(lit, router), DefaultConfig()); !slices.Contains(rep.Missing, "replicas (fewer than two endpoints serve the same model)") {
		t.Errorf("missing:\n%s\nwant the plain replicas line beside a router", strings.Join(rep.Missing, "\n"))
	}
	// One endpoint of its model: the plain line stays.
	other := ep(func(e *Endpoint) {
		e.URL = dark
		e.State = model.State{}
		e.Identity.Models = []model.ModelInfo{{ID: "other"}}
	})
	if rep := Evaluate(input(ep(nil), other), DefaultConfig()); !slices.Contains(rep.Missing, "replicas (fewer than two endpoints serve the same model)") {
		t.Errorf("missing:\n%s\nwant the plain replicas line", strings.Join(rep.Missing, "\n"))
	}
}
