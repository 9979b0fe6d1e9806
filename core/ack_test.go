package core

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// An acknowledged finding stays in the report, marked and ranked last,
// until the endpoint's next run; a silenced rule until its time.
func TestAckAndSilence(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	m := New(Options{Endpoints: []string{"http://a"}})
	m.advance(t0)
	m.ranked = []diagnosis.Finding{
		{ID: "restarts", Endpoint: "http://a", Severity: model.SevCrit, Title: "restarting"},
		{ID: "ttft_high", Endpoint: "http://a", Severity: model.SevWarn, Title: "slow"},
		{ID: "gpu_foreign", Severity: model.SevWarn, Title: "other processes"},
	}
	if err := m.Ack("http://a", "nope"); err == nil {
		t.Error("acknowledging a finding that is not open must fail")
	}
	if err := m.Ack("http://a", "restarts"); err != nil {
		t.Fatal(err)
	}
	ids := func() string {
		var s []string
		for _, f := range m.Report().Findings {
			s = append(s, f.ID)
		}
		return strings.Join(s, ",")
	}
	if got := ids(); got != "ttft_high,gpu_foreign,restarts" {
		t.Errorf("acked not last: %s", got)
	}
	if f := m.Report().Findings[2]; !f.Acked || !m.Acked(f) {
		t.Errorf("the acked finding is not marked: %+v", f)
	}
	m.Silence("ttft_high", t0.Add(time.Hour))
	if got := ids(); got != "gpu_foreign,restarts,ttft_high" {
		t.Errorf("silenced not ranked after the others: %s", got)
	}
	b, _ := json.Marshal(m.Snapshot())
	for _, want := range []string{`"acked":true`, `"silenced_until":"2026-11-24T11:00:00Z"`, `"silenced":{"ttft_high":"2026-11-24T11:00:00Z"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("snapshot JSON lacks %s: %s", want, b)
		}
	}
	// a new run of the endpoint clears its acknowledgements, not the silence
	m.newRun(m.endpoint("http://a"), t0.Add(time.Minute), "test", true)
	m.annotate()
	if f := m.Report().Findings; f[len(f)-1].ID != "ttft_high" || f[0].Acked || f[1].Acked {
		t.Errorf("after a new run: %+v", f)
	}
	// the silence ends at its time
	m.advance(t0.Add(2 * time.Hour))
	m.annotate()
	if got := ids(); got != "restarts,ttft_high,gpu_foreign" {
		t.Errorf("after the silence: %s", got)
	}
}

// A finding about no one endpoint (a GPU's) has no run to end its
// acknowledgement: the acknowledgement lasts while it stays open, and the
// finding opening again later is news.
func TestAckOfABoxFindingEndsWhenItCloses(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	m := New(Options{Endpoints: []string{"http://a"}})
	m.advance(t0)
	gpu := diagnosis.Finding{ID: "gpu_thermal", Severity: model.SevWarn, Title: "GPU 3 throttles"}
	m.ranked = []diagnosis.Finding{gpu}
	if err := m.Ack("", "gpu_thermal"); err != nil {
		t.Fatal(err)
	}
	m.dropClosedAcks() // still open: kept
	if !m.Acked(gpu) {
		t.Fatal("an open box finding lost its acknowledgement")
	}
	m.ranked = nil // it closed
	m.dropClosedAcks()
	m.ranked = []diagnosis.Finding{gpu} // and opened again
	m.annotate()
	if m.Acked(gpu) || m.Report().Findings[0].Acked {
		t.Fatal("a box finding that closed and opened again is still acknowledged")
	}
}

// pool_starved is the pool's: when the first idle worker gets busy the
// finding moves to the next one and stays the same finding, for its
// acknowledgement and its events (no "closed" on d3, "opened" on d4).
func TestPoolFindingKeepsItsAckAndEventsAsItMoves(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	m := New(Options{Endpoints: []string{"http://d3", "http://d4"}})
	m.advance(t0)
	on := func(ep string, others ...string) diagnosis.Finding {
		return diagnosis.Finding{ID: "pool_starved", Endpoint: ep, Others: others, Pool: "m (decode)", Severity: model.SevCrit, Title: "idle", Opened: t0}
	}
	m.ranked = []diagnosis.Finding{on("http://d3", "http://d4")}
	m.transitions(diagnosis.Report{Findings: m.ranked}, t0)
	if err := m.Ack("http://d3", "pool_starved"); err != nil {
		t.Fatal(err)
	}
	m.ranked = []diagnosis.Finding{on("http://d4")} // d3 got busy
	m.transitions(diagnosis.Report{Findings: m.ranked}, t0.Add(2*time.Second))
	m.dropClosedAcks()
	m.annotate()
	if f := m.Report().Findings[0]; !f.Acked {
		t.Errorf("the acknowledgement stayed behind on d3: %+v", f)
	}
	var kinds []string
	for i := 0; i < m.events.Len(); i++ {
		kinds = append(kinds, m.events.Newest(i).Event.Kind+" "+m.events.Newest(i).Event.Endpoint)
	}
	if len(kinds) != 1 || kinds[0] != KindFindingOpened+" http://d3" {
		t.Errorf("events %q: want the one opening", kinds)
	}
	// The pool no longer starved: closed, on the worker it was last on,
	// and its acknowledgement gone with it.
	m.ranked = nil
	m.transitions(diagnosis.Report{}, t0.Add(4*time.Second))
	m.dropClosedAcks()
	if ev := m.events.Newest(0).Event; ev.Kind != KindFindingClosed || ev.Endpoint != "http://d4" {
		t.Errorf("closing event %+v", ev)
	}
	if len(m.acks) != 0 {
		t.Errorf("acks %v kept after the pool's finding closed", m.acks)
	}
}
