package diagnosis

import (
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// An endpoint built every refresh with the same buffer pairs running and
// ITL as one built from scratch does, whatever the store did in between:
// an overwritten newest point, rings letting their oldest go, a restart,
// a series with gaps, a latency that appears late (TPOT until then).
func TestSeriesBufPairsAsFromScratch(t *testing.T) {
	for seed := int64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := model.NewStore(model.StoreConfig{MaxWindow: 2 * time.Minute, Points: 14})
		k := model.Key{Endpoint: "http://a:8000", Model: "m"}
		buf := &SeriesBuf{}
		at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
		reqs := 0.0
		for step := 0; step < 300; step++ {
			at = at.Add(time.Duration(1+rng.Intn(20)) * time.Second)
			sm := model.NewSample(k.Endpoint, k.Model, at, model.FromScrape)
			if rng.Intn(3) > 0 {
				sm.Gauges[model.Running] = float64(rng.Intn(30))
			}
			reqs += float64(rng.Intn(9))
			if rng.Intn(50) == 0 {
				reqs = 0
			}
			sm.Counters[model.Requests] = reqs
			lat := model.TPOT
			if step > 100 {
				lat = model.ITL
			}
			if rng.Intn(3) > 0 {
				mean := model.Some(rng.Float64())
				if rng.Intn(6) == 0 {
					mean = model.None
				}
				sm.Derived = &model.Derived{By: "prometheus", Window: time.Minute, Latency: map[model.Latency]model.Dist{lat: {Mean: mean}}}
			}
			s.Add(sm)
			if rng.Intn(4) == 0 {
				continue // a refresh the rules skip
			}
			got := EndpointFromStoreBuf(s, k, model.Identity{}, model.Scrape{}, at, time.Minute, buf)
			want := EndpointFromStore(s, k, model.Identity{}, model.Scrape{}, at, time.Minute)
			if len(got.Batch) != len(want.Batch) || (len(want.Batch) > 0 && !reflect.DeepEqual(got.Batch, want.Batch)) {
				t.Fatalf("seed %d step %d: pairs kept\n%v\nwant\n%v", seed, step, got.Batch, want.Batch)
			}
		}
	}
}
