package core

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// llamaScrape is a llama.cpp scrape as the adapter makes it from a /slots answer: the split reading,
// and the per-slot facts. The numbers are those of a real llama-server b1-de3ff81 (-c 2048, no -np:
// 4 unified slots of n_ctx 2048, two busy holding 917 and 918 tokens;
// testdata/engines/llamacpp-b1-de3ff81-slots-auto.json).
func llamaScrape(t time.Time) model.Scrape { return llamaScrapeHeld(t, 1835) }

func llamaScrapeHeld(t time.Time, held float64) model.Scrape {
	sm := model.NewSample(url, "m", t, model.FromScrape)
	const ctx, n = 2048, 4
	sm.Gauges[model.Running] = 2
	sm.Gauges[model.KVUsage], sm.Gauges[model.KVCapacityTokens] = held/(ctx*n), ctx*n
	sm.Gauges[model.SlotHeld], sm.Gauges[model.SlotCtx], sm.Gauges[model.MaxRunning] = held, ctx, n
	return model.Scrape{Endpoint: url, Time: t, Samples: []model.Sample{sm},
		Identity: model.Identity{Engine: model.LlamaCpp, Version: "b1-de3ff81", Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m"}}}}
}

func metricsJSON(t *testing.T, m *Monitor) (map[string]any, []string) {
	t.Helper()
	doc := m.Snapshot()
	if len(doc.Endpoints) != 1 || doc.Endpoints[0].Metrics == nil {
		t.Fatalf("snapshot endpoints %+v", doc.Endpoints)
	}
	ep := doc.Endpoints[0]
	b, _ := json.Marshal(ep.Metrics)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, ep.Notes
}

// near compares a JSON number (6 significant digits) with want; nil matches want < 0.
func near(v any, want float64) bool {
	f, ok := v.(float64)
	if want < 0 {
		return v == nil
	}
	return ok && math.Abs(f-want) <= 1e-5*max(1, want)
}

// The core sizes the pool from what it learned: nothing (a floor and a top, no capacity), then the
// log's start-up line of the same run (one slot's n_ctx is the pool).
func TestSlotKVFollowsTheLog(t *testing.T) {
	m := newMonitor()
	m.Apply(llamaScrape(at(0)))
	m.Tick(at(0))
	got, notes := metricsJSON(t, m)
	if !near(got["kv_cache_usage_ratio"], 1835.0/8192) || !near(got["kv_cache_usage_ratio_max"], 1835.0/2048) || !near(got["kv_capacity_tokens"], -1) {
		t.Errorf("unknown layout: %v", got)
	}
	if !strings.Contains(strings.Join(notes, " "), "up to 90 % (4×) if the KV cache is unified") {
		t.Errorf("unknown layout: notes %q", notes)
	}
	// A top under the high-water mark (95 %) is below it whatever the layout.
	if r := m.Report(); !strings.Contains(strings.Join(r.Checked, " "), "KV cache below") {
		t.Errorf("top 90 %%: checked %q, missing %q", r.Checked, r.Missing)
	}
	// A top over it is not judged "fine" on the floor (the slots hold 1990 of 2048 if unified).
	m.Apply(llamaScrapeHeld(at(1), 1990))
	m.Tick(at(1))
	if r := m.Report(); !strings.Contains(strings.Join(r.Missing, " "), "whether the KV cache is unified is unknown") || strings.Contains(strings.Join(r.Checked, " "), "KV cache below") {
		t.Errorf("KV judged fine on a floor: checked %q, missing %q", r.Checked, r.Missing)
	}
	line := "0.00.017.785 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 2048, kv_unified = 'true'"
	ev := logEvent(at(1), "llamacpp_slots", "", model.SevInfo, line, map[string]string{"n_slots": "4", "n_ctx_slot": "2048", "kv_unified": "true"})
	ev.Event.Category = "config"
	m.Apply(ev)
	m.Apply(llamaScrape(at(3)))
	m.Tick(at(3))
	got, notes = metricsJSON(t, m)
	if !near(got["kv_cache_usage_ratio"], 1835.0/2048) || !near(got["kv_capacity_tokens"], 2048) || !near(got["kv_cache_usage_ratio_max"], -1) {
		t.Errorf("unified from the log: %v", got)
	}
	if !strings.Contains(strings.Join(notes, " "), "unified KV cache (from the log: kv_unified = 'true')") {
		t.Errorf("unified from the log: notes %q", notes)
	}
}

// A local endpoint's command line says it when no log is attached.
func TestSlotKVFollowsTheCommandLine(t *testing.T) {
	m := newMonitor()
	m.Apply(llamaScrape(at(0)))
	m.Apply(model.PortOwner{Endpoint: url, Port: 8080, PID: 4711, Cmdline: "llama-server -m m.gguf -c 8192 -np 4 --metrics"})
	m.Apply(llamaScrape(at(1)))
	m.Tick(at(1))
	got, notes := metricsJSON(t, m)
	if !near(got["kv_cache_usage_ratio"], 1835.0/8192) || !near(got["kv_capacity_tokens"], 8192) || !near(got["kv_cache_usage_ratio_max"], -1) {
		t.Errorf("split from the command line: %v", got)
	}
	if !strings.Contains(strings.Join(notes, " "), "split KV cache (from the command line: -np 4 without -kvu)") {
		t.Errorf("split from the command line: notes %q", notes)
	}
}
