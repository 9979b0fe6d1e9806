package exporter

import (
	"math"
	"testing"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

// A llama-server whose KV layout is unknown (remote, no log): the usage is exported as the floor
// with its top beside it, and no pool size. The slot facts are those of a real llama-server
// b1-de3ff81 without -np (testdata/engines/llamacpp-b1-de3ff81-slots-auto.json): 4 slots of
// n_ctx 2048, 1835 tokens held.
func TestKVFloorExportsItsTop(t *testing.T) {
	const url = "http://10.0.0.7:8080"
	sm := model.NewSample(url, "m", t0, model.FromScrape)
	sm.Gauges[model.KVUsage], sm.Gauges[model.KVCapacityTokens] = 1835.0/8192, 8192
	sm.Gauges[model.SlotHeld], sm.Gauges[model.SlotCtx], sm.Gauges[model.MaxRunning] = 1835, 2048, 4
	mon := core.New(core.Options{Endpoints: []string{url}})
	mon.Apply(model.Scrape{Endpoint: url, Time: t0, Samples: []model.Sample{sm},
		Identity: model.Identity{Engine: model.LlamaCpp, Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m"}}}})
	mon.Tick(t0)
	c := New("test")
	c.Publish(Capture(mon))
	_, fams := gather(t, c)
	ep := map[string]string{"endpoint": url, "engine": "llamacpp"}
	if got := one(t, fams, "llmtop_kv_cache_usage_ratio", ep); math.Abs(got-1835.0/8192) > 1e-9 {
		t.Errorf("floor %v", got)
	}
	if got := one(t, fams, "llmtop_kv_cache_usage_ratio_max", ep); math.Abs(got-1835.0/2048) > 1e-9 {
		t.Errorf("top %v", got)
	}
	if vs := find(fams, "llmtop_kv_cache_capacity_tokens", ep); len(vs) != 0 {
		t.Errorf("pool size %v claimed while the layout is unknown", vs)
	}
}
