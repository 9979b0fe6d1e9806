package tui

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/model"
)

// The fleet table keeps each row while what it reads stands
// (fleetRowCache): after every refresh of a random fleet whose replicas
// change their numbers, restart, leave and come back, change engine or
// model, with the window changed, the clock stepped back and the table
// re-sorted, the rows on screen are those built anew from the core.
func TestFleetRowsKeptEqualBuildingFromScratch(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { fleetRowsKept(t, seed) })
	}
}

// churnReplica is one replica of churnFleet: its numbers in maps handed
// again unchanged while they stand, as the Prometheus source does.
type churnReplica struct {
	url, name, model string
	engine           model.Engine
	started          time.Time
	gauges           map[model.Gauge]float64
	derived          *model.Derived
	up, announced    bool
	down             bool // its scrapes fail (Prometheus's up is 0)
}

// churnFleet is a fleet whose replicas change at random.
type churnFleet struct {
	r    *rand.Rand
	reps []*churnReplica
}

func newChurnFleet(seed uint64, n int, t time.Time) *churnFleet {
	f := &churnFleet{r: rand.New(rand.NewPCG(seed, 33))}
	for i := range n {
		c := &churnReplica{url: fmt.Sprintf("http://10.1.0.%d:8000", i), name: fmt.Sprintf("prod/vllm-%02d", i),
			model: []string{"llama-3-8b", "qwen2.5-7b"}[i%2], engine: model.VLLM, started: t.Add(-time.Hour), up: true}
		f.numbers(c, 0.3, 2, 0.1, 0.02)
		f.reps = append(f.reps, c)
	}
	return f
}

// numbers gives c new maps.
func (f *churnFleet) numbers(c *churnReplica, kv, waiting, ttft, tpot float64) {
	c.gauges = map[model.Gauge]float64{model.Running: 12, model.Waiting: waiting, model.KVUsage: kv}
	c.derived = &model.Derived{By: "prometheus", Window: time.Minute,
		Rates: map[model.Counter]float64{model.GenTokens: 900, model.Requests: 4},
		Latency: map[model.Latency]model.Dist{
			model.TTFT: {P50: model.Some(ttft / 3), P90: model.Some(ttft / 2), P99: model.Some(ttft), Count: 240, Estimate: true},
			model.TPOT: {P50: model.Some(tpot / 2), P90: model.Some(tpot), P99: model.Some(tpot), Count: 240, Estimate: true},
		}}
}

// churn changes about share of the replicas, and returns the refresh's
// messages at t.
func (f *churnFleet) churn(t time.Time, share float64) []model.Input {
	var out []model.Input
	for _, c := range f.reps {
		if f.r.Float64() < share {
			switch f.r.IntN(9) {
			case 0, 1:
				f.numbers(c, []float64{0.3, 0.97, 0.999}[f.r.IntN(3)], []float64{0, 20, 90}[f.r.IntN(3)],
					[]float64{0.1, 0.6, 4}[f.r.IntN(3)], []float64{0.02, 0.3}[f.r.IntN(2)])
			case 2:
				c.started = t.Add(-2 * time.Second) // restarted
			case 3, 4:
				c.up = !c.up // gone from Prometheus's targets, or back
			case 5:
				c.engine = []model.Engine{model.VLLM, model.SGLang}[f.r.IntN(2)]
			case 6:
				c.model = []string{"llama-3-8b", "qwen2.5-7b", "mistral-7b"}[f.r.IntN(3)]
			case 7:
				c.name = fmt.Sprintf("prod/vllm-%02d-%d", f.r.IntN(40), f.r.IntN(3))
			case 8:
				c.down = !c.down
			}
		}
		if !c.up {
			if c.announced {
				out = append(out, model.Origin{Endpoint: c.url, Name: c.name, Source: model.SourcePrometheus, Gone: true,
					GoneWhy: "no longer among Prometheus's targets"})
				c.announced = false
			}
			continue
		}
		if !c.announced {
			out = append(out, model.Origin{Endpoint: c.url, Name: c.name, Source: model.SourcePrometheus, Missing: []string{"logs"}})
			c.announced = true
		}
		if c.down {
			out = append(out, model.Scrape{Endpoint: c.url, Time: t, Err: "connection refused", ErrKind: model.ErrRefused})
			continue
		}
		sm := model.Sample{Endpoint: c.url, Model: c.model, Time: t, Source: model.FromScrape, Started: c.started,
			Gauges: c.gauges, Derived: c.derived}
		out = append(out, model.Scrape{Endpoint: c.url, Time: t,
			Identity: model.Identity{Engine: c.engine, Models: []model.ModelInfo{{ID: c.model}}}, Samples: []model.Sample{sm}})
	}
	return out
}

func fleetRowsKept(t *testing.T, seed uint64) {
	now := t0
	f := newChurnFleet(seed, 30, now)
	m := New(Options{Now: now, NoColor: true, Fleet: true, Sources: map[string]string{"prometheus": ""}})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	v := m.overlays[m.fleetIndex()].o.(*fleetView)
	kept, total := 0, 0
	for step := range 120 {
		switch {
		case step%23 == 22:
			now = now.Add(-3 * time.Second) // the clock stepped back
		default:
			now = now.Add(5 * time.Second)
		}
		switch f.r.IntN(12) {
		case 0:
			m.Update(press("["))
		case 1:
			m.Update(press("]"))
		case 2:
			m.Update(press(">"))
		case 3:
			m.Update(press("I"))
		}
		m.Update(BatchMsg(f.churn(now, 0.08)))
		m.Update(Frame())
		_ = m.View()
		for s := range 2 {
			m.Update(ClockAt(now.Add(time.Duration(s+1) * time.Second)))
			_ = m.View()
		}
		got := append([]fleetRow(nil), v.rows...)
		want := buildFleetRows(m.d)
		sortFleet(want, v.sortCol, v.desc)
		if v.group {
			sortPools(want)
		}
		for i := range got {
			got[i].format()
		}
		for i := range want {
			want[i].format()
		}
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("refresh %d, row %d: kept\n%+v\nbuilt anew\n%+v", step, i, got[i], want[i])
				}
			}
			t.Fatalf("refresh %d: %d rows kept, %d built anew", step, len(got), len(want))
		}
		for _, r := range v.kept.byKey {
			if r.pass == v.kept.pass {
				total++
				if r.kept {
					kept++
				}
			}
		}
	}
	// at this churn most rows stand at most refreshes: a cache that never
	// keeps one proves nothing
	if kept*2 < total {
		t.Errorf("kept %d of %d rows", kept, total)
	}
	t.Logf("kept %d of %d rows", kept, total)
}
