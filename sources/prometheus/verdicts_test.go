package prometheus

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
)

// Issue 33: a fleet read through Prometheus, refreshed every 5 s, with a
// few replicas changing at each refresh (numbers across their thresholds
// and back, a restart, Prometheus losing a target and finding it again):
// the core that keeps the rules' verdicts on the replicas that did not
// change reports what a core judging every replica from scratch reports,
// refresh after refresh, and judges again only the replicas that changed
// (or whose verdicts read the clock).
func TestFleetKeptVerdictsEqualJudgingFromScratch(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { fleetKeptVerdicts(t, seed) })
	}
}

func fleetKeptVerdicts(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 33))
	f := &fakeProm{up: map[string]float64{}}
	const n = 24
	for i := range n {
		e := currentVLLM(vllmEP(i, "prod", []string{"llama-3-8b", "qwen2.5-7b"}[i%2], 0.3, 1, 0.15))
		f.eps = append(f.eps, e)
		f.up[e.labels["instance"]] = 1
	}
	s := newFake(t, f, Config{})
	opts := core.Options{Window: 5 * time.Minute, Store: StoreConfig(5 * time.Second)}
	kept := core.New(opts)
	opts.FromScratch = true
	scratch := core.New(opts)
	now := time.Now().Truncate(time.Second)
	judged, total := 0, 0
	for step := range 100 {
		now = now.Add(5 * time.Second)
		f.mu.Lock()
		for i := range f.eps {
			// a third of the replicas never change: steady for longer
			// than the window
			if step == 0 || r.Float64() >= 0.045*float64(i%3) {
				continue
			}
			v := f.eps[i].values
			inst := f.eps[i].labels["instance"]
			switch r.IntN(8) {
			case 0:
				v["gauge:kv_cache_usage_ratio"] = []float64{0.3, 0.97, 0.999}[r.IntN(3)]
			case 1:
				v["gauge:waiting"] = []float64{1, 20, 90}[r.IntN(3)]
			case 2:
				p99 := []float64{0.15, 0.6, 4}[r.IntN(3)]
				v["lat:ttft:p99"], v["lat:ttft:p90"], v["lat:ttft:p50"] = p99, p99/2, p99/4
			case 3:
				v["lat:itl:p99"] = []float64{0.04, 0.3}[r.IntN(2)]
			case 4:
				v["rate:preemptions"] = 4 - v["rate:preemptions"] // preempting, or no longer
			case 5:
				v["gauge:running"] = []float64{12, 0, 200}[r.IntN(3)]
			case 6:
				v["started"] = float64(now.Unix() - 2) // restarted
			case 7:
				f.up[inst] = 1 - f.up[inst] // Prometheus lost it, or found it again
			}
		}
		f.mu.Unlock()
		rf := s.Refresh(context.Background(), now)
		if rf.Err != "" {
			t.Fatalf("refresh %d: %s", step, rf.Err)
		}
		for _, m := range rf.Msgs {
			kept.Apply(m)
			scratch.Apply(m)
		}
		kept.Tick(now)
		scratch.Tick(now)
		if step > 0 {
			judged += kept.Judged()
			total += n
		}
		if a, b := kept.Report(), scratch.Report(); !reflect.DeepEqual(a, b) {
			t.Fatalf("refresh %d: kept verdicts:\n%s\nfrom scratch:\n%s", step, showReport(a), showReport(b))
		}
		// the events (a steady replica's preemptions not read from its
		// history), and the runs' summaries (its offered load not searched
		// for there), as worked out from it
		if a, b := allEvents(kept), allEvents(scratch); !reflect.DeepEqual(a, b) {
			t.Fatalf("refresh %d: %d events, from scratch %d:\n%v\n%v", step, len(a), len(b), a, b)
		}
		for _, u := range scratch.URLs() {
			if a, b := kept.Endpoint(u).Runs, scratch.Endpoint(u).Runs; !reflect.DeepEqual(a, b) {
				t.Fatalf("refresh %d: %s's runs:\n%+v\nfrom scratch:\n%+v", step, u, a, b)
			}
		}
	}
	if hk, hs := kept.History(), scratch.History(); !reflect.DeepEqual(hk, hs) {
		t.Fatalf("histories differ:\n%v\n%v", hk, hs)
	}
	// (a replica restarted reads "restarted N ago" from its source for the
	// window's five minutes, and one Prometheus lost reads the clock until
	// found: at this churn they add up to about half, where the rules judge
	// the fleet at once and the refresh after each replica alone)
	if judged*5 > total*4 {
		t.Errorf("judged %d of %d replica refreshes: the steady replicas' verdicts are not kept", judged, total)
	}
	t.Logf("judged %d of %d replica refreshes", judged, total)
}

func showReport(r diagnosis.Report) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s %q clear %v\n", f.ID, f.Endpoint, f.Title, !f.ClearSince.IsZero())
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "    %s\n", e.Text)
		}
	}
	for _, p := range r.Pending {
		fmt.Fprintf(&b, "  pending %s %s %s\n", p.ID, p.Endpoint, p.Held)
	}
	fmt.Fprintf(&b, "  checked %q\n  missing %q\n", r.Checked, r.Missing)
	return b.String()
}

// allEvents is m's event log, newest first.
func allEvents(m *core.Monitor) []core.EventEntry {
	var out []core.EventEntry
	for i := range m.Events().Len() {
		out = append(out, m.Events().Newest(i))
	}
	return out
}
