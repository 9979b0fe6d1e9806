package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// `llmtop diagnose --log FILE URL` on the real llama-server's log of two
// runs (sources/logs/testdata/backlog/SOURCE.md), attached while the second
// run serves: the backlog is history. Before, its banners made two runs,
// the first "planned" after 0 ms, and its twelve requests read in one
// instant were 29 142 req/s over a served_s of 0.0002.
func TestDiagnoseLogBacklogIsNotNow(t *testing.T) {
	metrics, err := os.ReadFile("../../testdata/engines/llamacpp-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			w.Write(metrics)
		case "/health":
			w.Write([]byte(`{"status":"ok"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	old, err := os.ReadFile("../../sources/logs/testdata/backlog/llama-server-two-runs.log")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "llama-server.log")
	if err := os.WriteFile(log, old, 0o600); err != nil {
		t.Fatal(err)
	}
	logFlags.files = []string{log}
	defer func() { logFlags.files = nil }()

	res, _ := diagnoseOnce(t, 3*time.Second, srv.URL)
	if len(res.Endpoints) != 1 {
		t.Fatalf("endpoints %+v", res.Endpoints)
	}
	runs := res.Endpoints[0].Runs
	if len(runs) != 1 || runs[0].StartedBy != "first seen; log start banner before llmtop started" || runs[0].End != "running" {
		t.Fatalf("runs %+v: want one, begun when first seen (its banner before llmtop started), running", runs)
	}
	if s := runs[0].Summary; s.ServedS < 1 || s.RequestsPS != nil && *s.RequestsPS > 100 {
		t.Errorf("summary served_s %v, requests_per_s %v: the backlog's requests are no rate of now", s.ServedS, s.RequestsPS)
	}
	for _, f := range res.Findings {
		if f.ID == "restarts" {
			t.Errorf("finding %s %+v: the backlog's banners are no restart", f.ID, f.Evidence)
		}
	}
}
