package model

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Issue 14 item 1: the fullest engine, and each engine's gauges in the
// snapshot JSON beside the endpoint's KV (the fullest one's).
func TestEnginesInSnapshotJSON(t *testing.T) {
	es := []EngineShare{{ID: "0", Running: Some(2), KVUsage: Some(0.001)}, {ID: "1", Running: Some(40), KVUsage: Some(0.999)}}
	if f, ok := Fullest(es); !ok || f.ID != "1" {
		t.Fatalf("fullest %+v %v", f, ok)
	}
	if _, ok := Fullest([]EngineShare{{ID: "0"}}); ok {
		t.Error("no KV reading is no fullest engine")
	}
	m := MetricsOf(State{KVUsage: Some(0.999), Engines: es, Latency: map[Latency]Dist{},
		SinceStart: map[Latency]Dist{TTFT: {Mean: Some(0.5), Count: 10, Exposed: true, SinceStart: true}}, RateWindow: time.Minute})
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"engines":[{"engine":"0"`, `"kv_cache_usage_ratio":0.999`, `"since_start":{"ttft_ms":{`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("missing %s in %s", want, b)
		}
	}
}
