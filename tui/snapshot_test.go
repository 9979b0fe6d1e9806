package tui

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func saveSnapshot(t *testing.T, m *Model) model.SnapshotJSON {
	t.Helper()
	var saved []byte
	m.opts.Save = func(b []byte) (string, error) { saved = b; return "/tmp/x.json", nil }
	_, cmd := m.Update(press("s"))
	run(t, m, cmd)
	var snap model.SnapshotJSON
	if err := json.Unmarshal(saved, &snap); err != nil {
		t.Fatalf("%v: %s", err, saved)
	}
	return snap
}

// QA #2: the log's stats lines are the scraped endpoint's own picture, not
// a second endpoint with model "" in the `s` file.
func TestSnapshotFoldsTheLogPictureIntoTheScrapedEndpoint(t *testing.T) {
	m := newTestModel()
	ss := scrapes(10, healthy)
	for _, s := range ss {
		m.Update(s)
	}
	sm := model.NewSample(testURL, "", ss[9].Time.Add(-500*time.Millisecond), model.FromLog)
	sm.Gauges[model.Running] = 20
	m.Update(sm)
	snap := saveSnapshot(t, m)
	if len(snap.Endpoints) != 1 {
		t.Fatalf("%d entries for one endpoint: %+v", len(snap.Endpoints), snap.Endpoints)
	}
	e := snap.Endpoints[0]
	if e.URL != testURL || e.Model != "Qwen/Qwen3-8B" || e.Metrics == nil || e.Metrics.Source != model.FromScrape {
		t.Fatalf("entry %+v metrics %+v", e, e.Metrics)
	}

	// Only the log reads (/metrics broken from the start): one entry, under
	// the model the endpoint serves, marked source "log".
	lm := newTestModel()
	id := ss[0].Identity
	lm.Update(model.Scrape{Endpoint: testURL, Time: t0, Identity: id, Err: "404 Not Found", ErrKind: model.ErrNotFound})
	ls := model.NewSample(testURL, "", t0.Add(time.Second), model.FromLog)
	ls.Gauges[model.Running] = 20
	lm.Update(ls)
	snap = saveSnapshot(t, lm)
	if len(snap.Endpoints) != 1 {
		t.Fatalf("%d entries: %+v", len(snap.Endpoints), snap.Endpoints)
	}
	e = snap.Endpoints[0]
	if e.Model != "Qwen/Qwen3-8B" || e.Metrics == nil || e.Metrics.Source != model.FromLog || !e.Metrics.Running.OK || e.Metrics.Running.V != 20 || e.Error == "" {
		t.Fatalf("log-only entry %+v metrics %+v", e, e.Metrics)
	}
}
