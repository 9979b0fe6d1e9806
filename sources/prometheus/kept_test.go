package prometheus

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Issue 33: the fleet's reading is kept from refresh to refresh (the
// decoder's series, each row's reading, the targets and their models), and
// what a refresh finds is still what its answers say: a value that changed
// is the new one, a series that changed its labels is read anew, a model
// or a target that is gone is gone, a release that changed its names is
// read under the new ones, and a restart inside the window hides the
// percentiles that would mix the two runs.
func TestKeptFleetReadsEachRefreshAnew(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	a := currentVLLM(vllmEP(0, "prod", "llama", 0.3, 1, 0.2))
	a2 := currentVLLM(vllmEP(0, "prod", "qwen", 0.5, 2, 0.4)) // a second model on the same target
	b := olderVLLM(vllmEP(1, "prod", "llama", 0.3, 1, 0.2))
	c := currentVLLM(vllmEP(2, "prod", "llama", 0.3, 1, 0.2))
	f.eps = []fakeEP{a, a2, b, c}
	for _, e := range f.eps {
		f.up[e.labels["instance"]] = 1
	}
	s := newFake(t, f, Config{})
	now := time.Now()
	scrapes := func() map[string]model.Scrape {
		t.Helper()
		now = now.Add(5 * time.Second)
		r := s.Refresh(context.Background(), now)
		if r.Err != "" {
			t.Fatal(r.Err)
		}
		out := map[string]model.Scrape{}
		for _, m := range r.Msgs {
			if sc, ok := m.(model.Scrape); ok {
				out[sc.Endpoint] = sc
			}
		}
		return out
	}
	models := func(sc model.Scrape) string {
		var ns []string
		for _, sm := range sc.Samples {
			ns = append(ns, sm.Model)
		}
		return strings.Join(ns, ",")
	}
	const A, B, C = "http://10.0.0.0:8000", "http://10.0.0.1:8000", "http://10.0.0.2:8000"
	for range 2 { // the second refresh reads through what the first kept
		got := scrapes()
		if models(got[A]) != "llama,qwen" || got[B].Samples[0].From[string(model.KVUsage)] != "vllm:gpu_cache_usage_perc" {
			t.Fatalf("A serves %q; B's KV read from %q", models(got[A]), got[B].Samples[0].From[string(model.KVUsage)])
		}
	}

	f.mu.Lock()
	f.eps[0].values["gauge:running"] = 31                 // a value changes
	delete(f.eps[0].values, "gauge:waiting")              // a series is gone
	delete(f.eps[0].values, "lat:ttft:p99")               // and one of a latency's
	f.eps = append(f.eps[:1:1], f.eps[2:]...)             // A's second model is gone
	f.eps[1] = currentVLLM(f.eps[1])                      // B upgraded: the new names
	f.eps[2].labels["model_name"] = "llama-2"             // C serves another model
	f.eps[2].values["started"] = float64(now.Unix() - 60) // and restarted a minute ago
	f.mu.Unlock()
	got := scrapes()
	if sm := got[A].Samples; models(got[A]) != "llama" || sm[0].Gauges[model.Running] != 31 {
		t.Errorf("A: models %q, running %v; want llama alone, 31", models(got[A]), sm[0].Gauges[model.Running])
	} else if w, ok := sm[0].Gauges[model.Waiting]; ok || sm[0].Derived.Latency[model.TTFT].P99.OK || !sm[0].Derived.Latency[model.TTFT].P50.OK {
		t.Errorf("A: waiting %v (%v), TTFT %+v: want the gone series gone, the others there", w, ok, sm[0].Derived.Latency[model.TTFT])
	}
	if from := got[B].Samples[0].From[string(model.KVUsage)]; from != "vllm:kv_cache_usage_perc" {
		t.Errorf("B's KV read from %q after the upgrade", from)
	}
	cs := got[C].Samples
	if models(got[C]) != "llama-2" || cs[0].Derived.Latency != nil || !strings.Contains(strings.Join(cs[0].Notes, " "), "restarted") {
		t.Errorf("C: models %q, latency %v, notes %q: want llama-2 alone, no percentiles, the restart noted", models(got[C]), cs[0].Derived.Latency, cs[0].Notes)
	}

	f.mu.Lock()
	f.eps = f.eps[:2] // C left Prometheus's targets
	delete(f.up, "10.0.0.2:8000")
	f.mu.Unlock()
	if got := scrapes(); len(got[C].Samples) != 0 || len(got[A].Samples) != 1 || len(got[B].Samples) != 1 {
		t.Errorf("after C left: C %d samples, A %d, B %d", len(got[C].Samples), len(got[A].Samples), len(got[B].Samples))
	}
	if len(s.fleet.eps) != 2 {
		t.Errorf("the fleet keeps %d targets, 2 found", len(s.fleet.eps))
	}
}

// The decoder reads an answer as it arrives and stops at the JSON's end;
// it still reads each body to its end (here white space after the JSON,
// in chunks of its own), or every query of every refresh would open a new
// connection (a TLS handshake each, to a Prometheus behind https).
func TestRefreshesReuseTheirConnections(t *testing.T) {
	f := fleetOf(20)
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.ServeHTTP(w, r)
		w.(http.Flusher).Flush() // a chunked answer, white space after the JSON sent apart
		fmt.Fprint(w, strings.Repeat(" ", 64<<10)+"\n")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s, err := New(Config{URL: srv.URL, Window: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Refresh(context.Background(), time.Now())
	if r.Err != "" || r.Targets != 20 {
		t.Fatalf("err %q, %d targets", r.Err, r.Targets)
	}
	first := conns.Load()
	for range 5 {
		s.Refresh(context.Background(), time.Now())
	}
	if n := conns.Load(); n > first+2 {
		t.Errorf("%d connections after 6 refreshes (%d after the first): each refresh opens new ones", n, first)
	}
}

// The queries are written and escaped once per window; the form a query
// sends is still url.Values' encoding of it.
func TestQueryFormIsTheValuesEncoding(t *testing.T) {
	ts := time.UnixMilli(1795733580123)
	for _, q := range (&Source{cfg: Config{Match: `namespace=~"prod|dev"`}}).queriesFor(5 * time.Minute).state {
		want := url.Values{"query": {q}, "time": {"1795733580.123"}, "timeout": {"15s"}}.Encode()
		if got := queryForm("query="+url.QueryEscape(q), ts, 15*time.Second); got != want {
			t.Fatalf("form %.200q, want %.200q", got, want)
		}
	}
}
