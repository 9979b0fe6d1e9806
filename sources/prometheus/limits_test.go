package prometheus

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

func fleetOf(n int) *fakeProm {
	f := &fakeProm{up: map[string]float64{}}
	for i := range n {
		e := vllmEP(i, "prod", "m", 0.3, 0, 0.2)
		f.eps = append(f.eps, e)
		f.up[e.labels["instance"]] = 1
	}
	return f
}

// A Prometheus with more engine targets than the cap: the first ones are
// followed, the rest dropped with a note that says how many and why, and
// the same ones are kept from refresh to refresh.
func TestTargetsOverTheCapAreDroppedWithANote(t *testing.T) {
	s := newFake(t, fleetOf(30), Config{MaxTargets: 20})
	r := s.Refresh(context.Background(), time.Now())
	if r.Err != "" || r.Targets != 20 {
		t.Fatalf("err %q targets %d", r.Err, r.Targets)
	}
	notes := strings.Join(r.Warnings, "; ")
	if !strings.Contains(notes, "at most 20 targets (--prometheus-max-targets): 10 others dropped") {
		t.Errorf("notes %q", notes)
	}
	first := map[string]bool{}
	for _, k := range s.order {
		first[k.instance] = true
	}
	r = s.Refresh(context.Background(), time.Now())
	if r.Targets != 20 || len(s.targets) != 20 {
		t.Fatalf("second refresh: targets %d known %d", r.Targets, len(s.targets))
	}
	for _, k := range s.order {
		if !first[k.instance] {
			t.Errorf("%s replaced a target already followed", k.instance)
		}
	}
}

// An answer past the series cap is read up to it; the rest is dropped with
// a note, not the answer.
func TestSeriesOverTheCapAreDropped(t *testing.T) {
	s := newFake(t, fleetOf(10), Config{maxSeries: 25})
	r := s.Refresh(context.Background(), time.Now())
	if r.Targets == 0 || !strings.Contains(strings.Join(r.Warnings, "; "), "an answer held over 25 series") {
		t.Errorf("targets %d err %q notes %q", r.Targets, r.Err, r.Warnings)
	}
}

// rewrite serves the fake's answers with old replaced by new once.
type rewrite struct {
	h        http.Handler
	old, new string
}

func (rw rewrite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	rw.h.ServeHTTP(rec, r)
	w.WriteHeader(rec.Code)
	w.Write(bytes.Replace(rec.Body.Bytes(), []byte(rw.old), []byte(rw.new), 1))
}

// One series whose value is not a float64 ("1e400", out of range) is
// dropped and counted; the rest of the fleet is read (it used to fail the
// whole query: 0 targets, exit 3).
func TestOneBadSeriesIsDroppedNotTheQuery(t *testing.T) {
	f := fleetOf(3)
	srv := httptest.NewServer(rewrite{h: f, old: `"12"]`, new: `"1e400"]`})
	t.Cleanup(srv.Close)
	s, err := New(Config{URL: srv.URL, Window: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Refresh(context.Background(), time.Now())
	if r.Err != "" || r.Targets != 3 {
		t.Fatalf("err %q targets %d", r.Err, r.Targets)
	}
	if !strings.Contains(strings.Join(r.Warnings, "; "), "1 series dropped: value or labels not readable") {
		t.Errorf("notes %q", r.Warnings)
	}
}

// A label value longer than any real one (a pod name of 1 MB) drops its
// series, not the query.
func TestAnOversizedLabelDropsItsSeries(t *testing.T) {
	f := fleetOf(2)
	f.eps[1].labels["pod"] = strings.Repeat("p", 2*maxLabelLen)
	s := newFake(t, f, Config{})
	r := s.Refresh(context.Background(), time.Now())
	if r.Targets != 2 || !strings.Contains(strings.Join(r.Warnings, "; "), "a label value over 1024 bytes") {
		t.Errorf("targets %d err %q notes %q", r.Targets, r.Err, r.Warnings)
	}
}

// A target that claims more models than any server serves keeps the first
// maxModels; the rest are dropped with a note.
func TestModelsOverTheCapAreDropped(t *testing.T) {
	f := fleetOf(maxModels + 5)
	for i := range f.eps {
		f.eps[i].labels["instance"] = "10.9.9.9:8000" // one target, a model per "replica"
		f.eps[i].labels["model_name"] = "m" + strings.Repeat("x", i)
	}
	s := newFake(t, f, Config{})
	r := s.Refresh(context.Background(), time.Now())
	if r.Targets != 1 || !strings.Contains(strings.Join(r.Warnings, "; "), "over 32 models on a target") {
		t.Fatalf("targets %d err %q notes %q", r.Targets, r.Err, r.Warnings)
	}
	for _, m := range r.Msgs {
		if sc, ok := m.(model.Scrape); ok && len(sc.Samples) != maxModels {
			t.Errorf("%d samples, want %d", len(sc.Samples), maxModels)
		}
	}
}

// A replica that leaves both the engine queries and up{} (a scale-down)
// is "gone": no rule judges it (it used to hold "endpoint down:
// unreachable", critical, as the top line), and both the source and the
// core forget it model.GoneExpiry later, so a fleet that churns pods does
// not grow without end.
func TestAScaleDownIsGoneNotDownAndExpires(t *testing.T) {
	f := fleetOf(2)
	s := newFake(t, f, Config{})
	mon := core.New(core.Options{Window: 5 * time.Minute})
	t0 := time.Now()
	feed(s.Refresh(context.Background(), t0), mon)
	f.mu.Lock()
	delete(f.up, f.eps[1].labels["instance"])
	f.eps = f.eps[:1]
	f.mu.Unlock()
	for i := 1; i <= 30; i++ { // 2.5 min at 5 s, past the rules' holds
		now := t0.Add(time.Duration(i) * 5 * time.Second)
		r := s.Refresh(context.Background(), now)
		for _, m := range r.Msgs {
			mon.Apply(m)
		}
		mon.Tick(now)
		for _, fd := range mon.Report().Findings {
			if fd.Endpoint == "http://10.0.0.1:8000" {
				t.Fatalf("%v: a scaled-down replica has a finding: %s %s", now.Sub(t0), fd.Severity, fd.Title)
			}
		}
		if e := mon.Endpoint("http://10.0.0.1:8000"); i == 1 && (e == nil || e.Life != model.LifeGone) {
			t.Fatalf("after it left: %+v", e)
		}
	}
	if urls := mon.URLs(); len(urls) != 1 || len(s.targets) != 1 {
		t.Errorf("after %s: core lists %v, the source %d targets", model.GoneExpiry, urls, len(s.targets))
	}
}

// A Prometheus (or a proxy before it) whose error echoes the request's
// Authorization header: neither basic auth's base64 of user:password nor a
// bearer token reaches the error (basic auth's was printed on stderr and in
// the JSON's prometheus.error).
func TestAnEchoedCredentialIsScrubbed(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"status":"error","errorType":"bad_data","error":"rejected header %s"}`, r.Header.Get("Authorization"))
	}))
	defer echo.Close()
	for _, cfg := range []Config{{User: "admin", Password: "s3cret-pw"}, {Bearer: "tok-9876543210"}} {
		cfg.URL = echo.URL
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := s.Refresh(context.Background(), time.Now())
		for _, leak := range []string{"YWRtaW46czNjcmV0LXB3", "s3cret-pw", "tok-9876543210"} {
			if strings.Contains(r.Err, leak) {
				t.Errorf("error shows a credential: %s", r.Err)
			}
		}
		if !strings.Contains(r.Err, "rejected header") {
			t.Errorf("err %q", r.Err)
		}
	}
}
