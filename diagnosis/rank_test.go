package diagnosis

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Rank moves each finding in place along its permutation; what comes out
// is what a stable sort of the findings themselves gives.
func TestRankIsAStableSort(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	ids := []string{"ttft_high", "queue_backlog", "cuda_oom", "pool_starved", "dead_backend_traffic", "kv_preemption"}
	cats := []Category{Availability, Memory, Queueing, Routing, Decode}
	for round := 0; round < 200; round++ {
		fs := make([]Finding, rng.Intn(40))
		for i := range fs {
			fs[i] = Finding{ID: ids[rng.Intn(len(ids))], Endpoint: fmt.Sprintf("http://e%d", rng.Intn(5)),
				Category: cats[rng.Intn(len(cats))], Severity: model.Severity(rng.Intn(3)),
				Opened: t0.Add(time.Duration(rng.Intn(4)) * time.Second), Title: fmt.Sprint(i)}
			if rng.Intn(4) == 0 {
				fs[i].ClearSince = t0
			}
		}
		want := append([]Finding{}, fs...)
		sort.SliceStable(want, func(i, j int) bool {
			a, b := &want[i], &want[j]
			if ca, cb := !a.ClearSince.IsZero(), !b.ClearSince.IsZero(); ca != cb {
				return cb
			}
			if a.Severity != b.Severity {
				return a.Severity > b.Severity
			}
			if oa, ob := order(a), order(b); oa != ob {
				return oa < ob
			}
			if !a.Opened.Equal(b.Opened) {
				return a.Opened.After(b.Opened)
			}
			if a.ID != b.ID {
				return a.ID < b.ID
			}
			return a.Endpoint < b.Endpoint
		})
		Rank(fs)
		if !reflect.DeepEqual(fs, want) {
			t.Fatalf("round %d: ranked\n%v\nwant\n%v", round, titles(fs), titles(want))
		}
	}
}

func titles(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Title
	}
	return out
}

// The picture before a restart stays as it was while the newest picture
// is updated in place at every refresh after it.
func TestBeforeRestartPictureStaysFrozen(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for s := 0; s < 3; s++ {
		d.Update(Input{Time: at(s), Endpoints: []Endpoint{ep(func(e *Endpoint) {
			e.State.Time, e.State.GenTPS = at(s), model.Some(500)
		})}})
	}
	for s := 3; s < 8; s++ {
		d.Update(Input{Time: at(s), Endpoints: []Endpoint{ep(func(e *Endpoint) {
			e.Identity.Version = "0.12.0"
			e.State.Time, e.State.GenTPS, e.State.Restarts = at(s), model.Some(float64(100*s)), []time.Time{at(3)}
		})}})
	}
	b := d.before[url]
	if b == nil || b.Version != "0.11.0" || b.GenTPS.V != 500 {
		t.Fatalf("the picture before the restart: %+v", b)
	}
	if n := d.base[url]; n == nil || n == b || n.GenTPS.V != 700 || n.Version != "0.12.0" {
		t.Fatalf("the newest picture: %+v", n)
	}
}
