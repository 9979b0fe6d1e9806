package diagnosis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// peers are n replicas of model m with TTFT p99 ttft seconds and KV kv.
func peers(m string, n int, ttft, kv float64) []Endpoint {
	out := make([]Endpoint, n)
	for i := range out {
		u := fmt.Sprintf("http://%s-%d", m, i)
		out[i] = ep(func(e *Endpoint) {
			e.URL, e.State.Key = u, model.Key{Endpoint: u, Model: m}
			e.State.Latency[model.TTFT] = dist(ttft/3, ttft/2, ttft+float64(i)*0.005, ttft/3)
			e.State.KVUsage = model.Some(kv)
		})
	}
	return out
}

func TestReplicaOutlier(t *testing.T) {
	slow := func(eps []Endpoint, i int, ttft float64) []Endpoint {
		eps[i].State.Latency[model.TTFT] = dist(ttft/3, ttft/2, ttft, ttft/3)
		return eps
	}
	runCases(t, []ruleCase{
		{name: "one of five replicas at 6× the median TTFT p99", in: input(slow(peers("m", 5, 0.2, 0.3), 2, 1.2)...), want: "replica_outlier",
			check: func(t *testing.T, f *Finding) {
				if f.Endpoint != "http://m-2" || !strings.Contains(f.Title, "TTFT p99 1.2 s vs median 215 ms of 5 replicas of m") ||
					!hasEvidence(f, "median 215 ms, range 200 ms–1.2 s over 5 replicas of m") {
					t.Errorf("%+v", *f)
				}
			}},
		{name: "twice the median but only 40 ms more", in: input(slow(peers("m", 5, 0.04, 0.3), 0, 0.08)...), none: "replica_outlier"},
		{name: "all alike", in: input(peers("m", 6, 0.2, 0.3)...), none: "replica_outlier"},
		{name: "KV far above its peers", in: input(func() []Endpoint {
			eps := peers("m", 4, 0.2, 0.2)
			eps[3].State.KVUsage = model.Some(0.9)
			return eps
		}()...), want: "replica_outlier",
			check: func(t *testing.T, f *Finding) {
				if f.Endpoint != "http://m-3" || !strings.Contains(f.Title, "KV usage 90 % vs median 20 %") {
					t.Errorf("%+v", *f)
				}
			}},
	})
}

func TestReplicaOutlierNeedsThree(t *testing.T) {
	eps := peers("m", 2, 0.2, 0.3)
	eps[1].State.Latency[model.TTFT] = dist(0.4, 0.6, 1.2, 0.4)
	rep := Evaluate(input(eps...), DefaultConfig())
	if f := byID(rep, "replica_outlier"); f != nil {
		t.Fatalf("two replicas judged: %+v", *f)
	}
	found := false
	for _, m := range rep.Missing {
		if strings.Contains(m, "an outlier needs 3") {
			found = true
		}
	}
	if !found {
		t.Errorf("not said why two replicas cannot be judged: %v", rep.Missing)
	}
}

func TestFleetShare(t *testing.T) {
	kvBound := func(eps []Endpoint, n int) []Endpoint {
		for i := range n {
			eps[i].State.KVUsage = model.Some(0.97)
		}
		return eps
	}
	runCases(t, []ruleCase{
		{name: "7 of 20 KV-bound", in: input(kvBound(peers("llama-3-8b", 20, 0.1, 0.4), 7)...), want: "fleet_share",
			check: func(t *testing.T, f *Finding) {
				if f.Endpoint != "" || f.Severity != model.SevInfo || !hasEvidence(f, "7 of 20 replicas of llama-3-8b KV-bound (KV ≥ 95 %)") {
					t.Errorf("%+v", *f)
				}
			}},
		{name: "most of the fleet: a capacity warning", in: input(kvBound(peers("m", 4, 0.1, 0.4), 3)...), want: "fleet_share",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevWarn || !strings.Contains(f.Title, "fleet: m: 3/4 KV-bound") {
					t.Errorf("%+v", *f)
				}
			}},
		{name: "a replica without KV is not counted, and said so", in: input(func() []Endpoint {
			eps := kvBound(peers("m", 3, 0.1, 0.4), 1)
			eps[2].State.KVUsage = model.None
			return eps
		}()...), want: "fleet_share",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "1 of 3 replicas of m KV-bound (KV ≥ 95 %) (1 without the number, not counted)") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
		{name: "no symptom", in: input(peers("m", 5, 0.1, 0.4)...), none: "fleet_share"},
	})
}
