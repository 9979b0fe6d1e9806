package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// decodePool is five decode workers, three loaded and queueing, the last
// idle ones at the given URLs.
func decodePool(idle ...string) []Endpoint {
	eps := []Endpoint{member("http://d0:8000", model.RoleDecode, 48, 6, 1.0), member("http://d1:8000", model.RoleDecode, 47, 9, 0.99),
		member("http://d2:8000", model.RoleDecode, 50, 4, 1.0)}
	for _, u := range idle {
		eps = append(eps, member(u, model.RoleDecode, 0, 0, 0))
	}
	return eps
}

// The routed demo's advice listed every router's health check (Dynamo,
// SGLang gateway, production-stack, llm-d) behind a production-stack
// router: with the router in front read, only its own is named, and its
// own balance setting.
func TestPoolStarvedAdviceNamesTheRouterInFront(t *testing.T) {
	pool := decodePool("http://d3:8000", "http://d4:8000")
	var bs []model.Backend
	for _, p := range pool {
		bs = append(bs, backend(p.URL, 1, 1, p.State.Running.V))
	}
	_, rep := watch(t, time.Minute, func(int) []Endpoint { return append([]Endpoint{prodRouter(bs...)}, pool...) })
	f := open(rep, "pool_starved")
	if f == nil || len(f.Actions) < 2 {
		t.Fatalf("pool_starved %+v; findings %v", f, ids(rep.Findings))
	}
	health, balance := f.Actions[0].Change, f.Actions[1].Change
	if !strings.Contains(health, "production-stack router") || !strings.Contains(health, "vllm:healthy_pods_total") {
		t.Errorf("health advice %q names no production-stack check", health)
	}
	if !strings.Contains(balance, "--routing-logic") {
		t.Errorf("balance advice %q", balance)
	}
	for _, other := range []string{"Dynamo", "SGLang", "llm-d", "smg_"} {
		if strings.Contains(health, other) || strings.Contains(balance, other) {
			t.Errorf("advice names %s behind a production-stack router: %q / %q", other, health, balance)
		}
	}

	// No router read: each router's check, since llmtop cannot tell which.
	_, rep = watch(t, time.Minute, func(int) []Endpoint { return decodePool("http://d3:8000", "http://d4:8000") })
	if f := open(rep, "pool_starved"); f == nil || !hasAction(f, "Dynamo") || !hasAction(f, "production-stack") {
		t.Errorf("without a router: %+v", f)
	}
}

// The title named the role twice ("decode workers of m (decode)") and left
// the idle workers unnamed past the first: it counts and names them.
func TestPoolStarvedTitleNamesEveryIdleWorker(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		return decodePool("http://d3:8000", "http://d4:8000", "http://d5:8000", "http://d6:8000")
	})
	f := open(rep, "pool_starved")
	if f == nil {
		t.Fatalf("pool_starved not open; findings %v", ids(rep.Findings))
	}
	want := "4 of 7 decode workers of m idle while the other 3 are loaded: d3:8000, d4:8000, d5:8000 and 1 more"
	if f.Title != want {
		t.Errorf("title %q, want %q", f.Title, want)
	}
	if n := strings.Count(f.Title, "decode"); n != 1 {
		t.Errorf("%q says decode %d times", f.Title, n)
	}
}

// The routed demo's prefill pool (one running and one waiting on one
// worker, nothing on the other) was critical: two requests are no evidence
// that the router skips a worker. It is not judged, and says why.
func TestPoolStarvedNotJudgedUnderTooFewRequests(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{member("http://p0", model.RolePrefill, 1, 1, 0.002), member("http://p1", model.RolePrefill, 0, 0, 0)}
	})
	if f := open(rep, "pool_starved"); f != nil {
		t.Errorf("%s %q on two requests", f.Severity, f.Title)
	}
	said := false
	for _, m := range rep.Missing {
		said = said || strings.Contains(m, "idle prefill workers of m not checked, because too few requests: 2 in flight")
	}
	if !said {
		t.Errorf("missing %q", rep.Missing)
	}
	// A full KV is evidence at any count.
	_, rep = watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{member("http://p0", model.RolePrefill, 2, 0, 0.97), member("http://p1", model.RolePrefill, 0, 0, 0)}
	})
	if open(rep, "pool_starved") == nil {
		t.Errorf("KV full beside an idle worker not raised; findings %v", ids(rep.Findings))
	}
}

// A Dynamo frontend lists no workers llmtop reads; the one router watched
// is the one in front, and its own knobs are named.
func TestPoolStarvedAdviceBehindDynamo(t *testing.T) {
	front := ep(func(e *Endpoint) {
		e.URL, e.Scrape.Endpoint = "http://frontend:8000", "http://frontend:8000"
		e.Identity.Layer = engines.DynamoFrontend.What()
		e.State = model.State{}
	})
	_, rep := watch(t, time.Minute, func(int) []Endpoint { return append([]Endpoint{front}, decodePool("http://d3:8000")...) })
	f := open(rep, "pool_starved")
	if f == nil || len(f.Actions) < 2 {
		t.Fatalf("pool_starved %+v; findings %v", f, ids(rep.Findings))
	}
	if h, b := f.Actions[0].Change, f.Actions[1].Change; !strings.Contains(h, "Dynamo frontend") || !strings.Contains(b, "--kv-overlap-score-weight") ||
		strings.Contains(h+b, "production-stack") || strings.Contains(h+b, "SGLang") {
		t.Errorf("behind Dynamo: %q / %q", h, b)
	}
}

// The finding is about every idle worker: the first is its endpoint, the
// others are named as its Others, so a view of each endpoint's findings
// shows it on all of them (the fleet view showed it on the first only).
func TestPoolStarvedIsAboutEveryIdleWorker(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		return decodePool("http://d3:8000", "http://d4:8000", "http://d5:8000")
	})
	f := open(rep, "pool_starved")
	if f == nil {
		t.Fatalf("pool_starved not open; findings %v", ids(rep.Findings))
	}
	if got := append([]string{f.Endpoint}, f.Others...); strings.Join(got, " ") != "http://d3:8000 http://d4:8000 http://d5:8000" {
		t.Errorf("about %v, want the three idle workers", got)
	}
}

// With no router read, the routing advice named every router's check in
// one breath and never said why, nor that watching the router would name
// its own: it leads with that now. A router watched is named instead.
func TestRoutingAdviceAsksForTheRouterWhenNoneIsRead(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint { return decodePool("http://d3:8000", "http://d4:8000") })
	f := open(rep, "pool_starved")
	if f == nil || len(f.Actions) != 3 || f.Actions[0] != watchRouter || !strings.Contains(f.Actions[1].Change, "production-stack") {
		t.Fatalf("no router read: %+v", f)
	}
	pool := decodePool("http://d3:8000", "http://d4:8000")
	var bs []model.Backend
	for _, p := range pool {
		bs = append(bs, backend(p.URL, 1, 1, p.State.Running.V))
	}
	_, rep = watch(t, time.Minute, func(int) []Endpoint { return append([]Endpoint{prodRouter(bs...)}, pool...) })
	if f := open(rep, "pool_starved"); f == nil || f.Actions[0] == watchRouter || hasAction(f, "watch the router") {
		t.Errorf("a router read, and still asked for: %+v", f)
	}
}

// pool_starved is the pool's, not its first idle worker's: when d3 gets
// busy and d4 stays idle, the pool is still starved and the finding stays
// the one that opened (its hold not started again, its opening kept, no
// "condition clear" on d3 and no second finding forming on d4); it moves
// to d4.
func TestPoolStarvedIsThePoolsAsItsIdleWorkersChange(t *testing.T) {
	dg := NewDiagnoser(DefaultConfig())
	var opened time.Time
	for s := 0; s <= 80; s += 2 {
		now := t0.Add(time.Duration(s) * time.Second)
		pool := decodePool("http://d3:8000", "http://d4:8000")
		if s >= 40 {
			pool[3] = member("http://d3:8000", model.RoleDecode, 49, 5, 1.0) // d3 now loaded
		}
		for i := range pool {
			pool[i].LastOK, pool[i].Scrape.Time, pool[i].State.Time = now, now, now
		}
		rep := dg.Update(Input{Time: now, Endpoints: pool})
		var fs []Finding
		for _, f := range rep.Findings {
			if f.ID == "pool_starved" {
				fs = append(fs, f)
			}
		}
		if s < 30 {
			continue
		}
		if len(fs) != 1 {
			t.Fatalf("%ds: %d pool_starved findings open, want 1: %+v", s, len(fs), fs)
		}
		f := fs[0]
		if opened.IsZero() {
			opened = f.Opened
		}
		if !f.Opened.Equal(opened) || hasEvidence(&f, "condition clear") {
			t.Fatalf("%ds: the finding opened again or is clearing: opened %v (first %v), evidence %+v", s, f.Opened, opened, f.Evidence)
		}
		if s >= 40 && (f.Endpoint != "http://d4:8000" || len(f.Others) != 0) {
			t.Errorf("%ds: on %s (others %v), want d4 alone", s, f.Endpoint, f.Others)
		}
		for _, p := range rep.Pending {
			if p.Finding.ID == "pool_starved" {
				t.Errorf("%ds: a second pool_starved forming on %s", s, p.Finding.Endpoint)
			}
		}
	}
	for _, f := range dg.History() {
		if f.ID == "pool_starved" && !f.Active() {
			t.Errorf("pool_starved closed at %v while the pool stayed starved", f.Closed)
		}
	}
}
