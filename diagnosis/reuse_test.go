package diagnosis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// slowFleet is n replicas whose TTFT p99 is p99 seconds (over the SLO).
func slowFleet(n int, p99 float64, at time.Time) Input {
	var eps []Endpoint
	for i := range n {
		u := fmt.Sprintf("http://10.0.2.%d:8000", i)
		eps = append(eps, ep(func(e *Endpoint) {
			e.URL, e.Scrape.Endpoint, e.State.Key.Endpoint = u, u, u
			e.State.Latency[model.TTFT] = dist(p99/2, p99*0.8, p99, p99/2)
		}))
	}
	in := input(eps...)
	in.Time = at
	return in
}

// The Diagnoser reuses its memory from one refresh to the next (the rules'
// findings, their lacks, the actions shared by a fleet's findings): every
// report shows its own refresh's numbers, and a report handed out keeps
// them after the next refresh.
func TestDiagnoserReuseShowsCurrentNumbers(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	var reps []Report
	p99s := []float64{0.5, 0.5, 0.7, 0.9, 0.7, 0.5, 0.6, 0.6, 0.8, 0.9}
	for i, p99 := range p99s {
		reps = append(reps, d.Update(slowFleet(6, p99, t0.Add(time.Duration(i)*5*time.Second))))
	}
	for i, p99 := range p99s {
		want := fmt.Sprintf("TTFT p99≈%d ms > SLO", int(p99*1000))
		var fs []Finding
		for _, f := range append(append([]Finding(nil), reps[i].Findings...), pendingFindings(reps[i])...) {
			if f.ID == "ttft_high" {
				fs = append(fs, f)
			}
		}
		if len(fs) != 6 {
			t.Fatalf("refresh %d: %d findings and pending, want 6", i, len(fs))
		}
		for _, f := range fs {
			if len(f.Evidence) == 0 || !strings.HasPrefix(f.Evidence[0].Text, want) {
				t.Errorf("refresh %d, %s: evidence %q, want it to begin %q", i, f.Endpoint, f.Evidence, want)
			}
			if len(f.Actions) == 0 {
				t.Errorf("refresh %d, %s: no actions", i, f.Endpoint)
			}
		}
	}
	for i, want := range map[int]string{7: "condition holding for 35 s (opens after 30 s)", 9: "condition holding for 45 s (opens after 30 s)"} {
		for _, f := range reps[i].Findings {
			if last := f.Evidence[len(f.Evidence)-1].Text; f.ID == "ttft_high" && last != want {
				t.Errorf("refresh %d, %s: %q, want %q", i, f.Endpoint, last, want)
			}
		}
	}
	// The shared actions are the same for every replica, and a finding
	// changed by its reader does not change another's.
	fs := reps[9].Findings
	if len(fs) < 2 {
		t.Fatalf("%d findings open: %+v", len(fs), reps[9])
	}
	fs[0].Actions = append(fs[0].Actions, Action{Change: "mine"})
	if last := fs[1].Actions[len(fs[1].Actions)-1]; last.Change == "mine" {
		t.Errorf("one finding's actions grew another's")
	}
}

func pendingFindings(rep Report) []Finding {
	var fs []Finding
	for _, p := range rep.Pending {
		fs = append(fs, p.Finding)
	}
	return fs
}
