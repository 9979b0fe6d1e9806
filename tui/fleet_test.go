package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// fleetMsgs is what a Prometheus source sends for n replicas at t: an
// Origin for each, then a Scrape whose sample carries Prometheus-evaluated
// values (model.Derived). Replica 3 is far slower than its peers, every
// 7th is KV-bound with a queue; the models alternate.
func fleetMsgs(n int, t time.Time, origins bool) []model.Input {
	var out []model.Input
	for i := range n {
		id := fmt.Sprintf("http://10.0.%d.%d:8000", i/250, i%250)
		name := []string{"llama-3-8b", "qwen2.5-7b"}[i%2]
		if origins {
			out = append(out, model.Origin{Endpoint: id, Name: fmt.Sprintf("prod/vllm-%03d", i), Source: model.SourcePrometheus,
				Missing: []string{"logs"}})
		}
		kv, waiting, ttft := 0.30+float64(i%5)/100, float64(i%3), 0.08+float64(i%4)/100
		if i%7 == 6 {
			kv, waiting = 0.97, 60
		}
		if i == 3 {
			ttft = 1.2
		}
		d := &model.Derived{By: "prometheus", Window: time.Minute,
			Rates: map[model.Counter]float64{model.GenTokens: 900 + float64(i), model.Requests: 4},
			Latency: map[model.Latency]model.Dist{
				model.TTFT: {P50: model.Some(ttft / 3), P90: model.Some(ttft / 2), P99: model.Some(ttft), Count: 240, Estimate: true},
				model.TPOT: {P50: model.Some(0.01), P90: model.Some(0.015), P99: model.Some(0.02), Count: 240, Estimate: true},
			}}
		sm := model.Sample{Endpoint: id, Model: name, Time: t, Source: model.FromScrape,
			Gauges: map[model.Gauge]float64{model.Running: 12, model.Waiting: waiting, model.KVUsage: kv}, Derived: d}
		out = append(out, model.Scrape{Endpoint: id, Time: t, Identity: model.Identity{Engine: model.VLLM, Models: []model.ModelInfo{{ID: name}}},
			Samples: []model.Sample{sm}})
	}
	return out
}

// fleetModel is the monitor after a minute of refreshes of n replicas.
func fleetModel(n int) *Model {
	return fleetAfterMinute(func(at time.Time, origins bool) []model.Input { return fleetMsgs(n, at, origins) })
}

// fleetAfterMinute is the monitor after a minute of a fleet source's
// refreshes every 5 s, msgs giving each refresh's messages.
func fleetAfterMinute(msgs func(at time.Time, origins bool) []model.Input) *Model {
	m := New(Options{Now: t0, NoColor: true, Fleet: true, Sources: map[string]string{"prometheus": ""}})
	for s := 0; s <= 60; s += 5 {
		at := t0.Add(time.Duration(s) * time.Second)
		for _, msg := range msgs(at, s == 0) {
			m.Update(msg)
		}
		m.Update(tickMsg(at.Add(time.Second)))
	}
	return m
}

func TestGoldenFleet(t *testing.T) {
	for _, sz := range []struct {
		name string
		w, h int
	}{{"80x24", 80, 24}, {"120x40", 120, 40}, {"250x70", 250, 70}} {
		t.Run(sz.name, func(t *testing.T) {
			m := fleetModel(14)
			m.Update(model.Origin{Endpoint: "http://10.0.0.13:8000", Name: "prod/vllm-013", Source: model.SourcePrometheus,
				Gone: true, GoneWhy: "no longer among Prometheus's targets"})
			m.Update(tickMsg(t0.Add(63 * time.Second)))
			golden(t, "fleet_"+sz.name, screen(t, m, sz.w, sz.h))
		})
	}
}

func TestFleetFindsOutlierAndShare(t *testing.T) {
	m := fleetModel(14)
	var ids []string
	for _, f := range m.d.Core.Report().Findings {
		ids = append(ids, f.ID+" "+f.Endpoint+" "+f.Title)
	}
	all := strings.Join(ids, "\n")
	if !strings.Contains(all, "replica_outlier http://10.0.0.3:8000 replica far from its peers: TTFT p99") {
		t.Errorf("no TTFT outlier on replica 3:\n%s", all)
	}
	if !strings.Contains(all, "fleet_share") || !strings.Contains(all, "llama-3-8b: 1/7 KV-bound") {
		t.Errorf("no fleet share finding:\n%s", all)
	}
}

func TestFleetKeys(t *testing.T) {
	m := fleetModel(14)
	view := func() string { return ansi.Strip(m.Render()) }
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if !strings.Contains(view(), "14 endpoints · 14 serving") {
		t.Fatalf("the fleet view is not the first screen:\n%s", view())
	}
	// sort: o steps to state, then waiting (worst first)
	m.Update(press(">"))
	m.Update(press(">"))
	rows := tableRows(view())
	if len(rows) == 0 || !strings.Contains(rows[0], "60") {
		t.Errorf("sorted by waiting, the first row should be a queueing replica:\n%s", strings.Join(rows, "\n"))
	}
	// filter
	for _, k := range []string{"/", "q", "w", "e", "n", "enter"} {
		m.Update(press(k))
	}
	if v := view(); !strings.Contains(v, `filter "qwen": 7 of 14`) || strings.Contains(strings.Join(tableRows(v), "\n"), "llama-3-8b") {
		t.Errorf("filter qwen:\n%s", v)
	}
	m.Update(press("esc")) // clears the filter, stays in the view
	if v := view(); !strings.Contains(v, "14 endpoints") || strings.Contains(v, `filter "`) {
		t.Errorf("esc should clear the filter:\n%s", v)
	}
	// group by pool (a model and its prefill/decode role: none here)
	m.Update(press("m"))
	if v := view(); !strings.Contains(v, "▸ llama-3-8b · 7/7 serving · wait 0–60") || !strings.Contains(v, "▸ qwen2.5-7b · 7/7 serving") {
		t.Errorf("group by pool:\n%s", v)
	}
	// enter opens the selected replica; esc comes back
	m.Update(press("m"))
	m.Update(press(">")) // tpot... step to a known order: name
	for m.overlays[m.fleetIndex()].o.(*fleetView).sortCol != colName {
		m.Update(press(">"))
	}
	m.Update(press("I")) // name ascending
	if fv := m.overlays[m.fleetIndex()].o.(*fleetView); fv.desc {
		m.Update(press("I"))
	}
	m.Update(press("j"))
	_, cmd := m.Update(press("enter"))
	if cmd == nil {
		t.Fatal("enter gave no command")
	}
	m.Update(cmd())
	if m.overlay >= 0 {
		t.Fatalf("enter did not open the endpoint")
	}
	if k, _ := m.d.Key(); k.Endpoint != "http://10.0.0.1:8000" {
		t.Errorf("opened %v, want the second row (prod/vllm-001)", k)
	}
	m.Update(press("esc"))
	if m.overlay != m.fleetIndex() {
		t.Errorf("esc on the opened endpoint did not come back to the fleet")
	}
}

// tableRows are the lines after the table's header.
func tableRows(v string) []string {
	ls := strings.Split(v, "\n")
	for i, l := range ls {
		if strings.Contains(l, "NAME") && strings.Contains(l, "STATE") {
			return ls[i+1:]
		}
	}
	return nil
}

func TestFleetHostileNamesAndEmpty(t *testing.T) {
	m := New(Options{Now: t0, NoColor: true, Fleet: true, Sources: map[string]string{"prometheus": "http://prom:9090: cannot reach Prometheus: connection refused"}})
	out := screen(t, m, 80, 24)
	if !strings.Contains(out, "no endpoint: http://prom:9090: cannot reach Prometheus") {
		t.Errorf("an unreachable Prometheus is not said:\n%s", out)
	}
	msgs := fleetMsgs(2, t0, true)
	o := msgs[0].(model.Origin)
	o.Name = "prod/\x1b[2Jevil\x1b]0;title\x07-pod-名前"
	msgs[0] = o
	for _, msg := range msgs {
		m.Update(msg)
	}
	m.Update(tickMsg(t0.Add(time.Second)))
	out = screen(t, m, 80, 24)
	if strings.Contains(m.Render(), "\x1b[2J") || strings.Contains(m.Render(), "\x1b]0;") {
		t.Errorf("a label's escape reached the screen")
	}
	if !strings.Contains(out, "evil") {
		t.Errorf("the cleaned name is not shown:\n%s", out)
	}
}

// A refresh sent as one BatchMsg is applied whole and judged once.
func TestFleetBatchRunsTheRulesOnce(t *testing.T) {
	m := fleetModel(14)
	before := m.d.Core.Evaluations()
	at := t0.Add(70 * time.Second)
	msgs := fleetMsgs(14, at, false)
	m.Update(BatchMsg(msgs))
	m.Update(tickMsg(at.Add(time.Second)))
	if n := m.d.Core.Evaluations() - before; n != 1 {
		t.Errorf("the rules ran %d times on one refresh, want 1", n)
	}
	for _, u := range m.d.Endpoints() {
		if e := m.d.Info(u); !e.Last.Equal(at) {
			t.Errorf("%s last scraped %v, want %v", u, e.Last, at)
		}
	}
}

// Issue 31 item 22: at 80×24 the fleet named every replica of a
// job/instance target "vllm/127.0.0.…"; the name keeps the part that
// tells them apart, the port.
func TestFleetNamesKeepThePort(t *testing.T) {
	m := New(Options{Now: t0, NoColor: true, Fleet: true, Sources: map[string]string{"prometheus": ""}})
	for s := 0; s <= 10; s += 5 {
		at := t0.Add(time.Duration(s) * time.Second)
		for _, msg := range fleetMsgs(4, at, false) {
			if o, ok := msg.(model.Scrape); ok && s == 0 {
				port := 8001 + int(o.Endpoint[len(o.Endpoint)-6]-'0') // http://10.0.0.N:8000
				m.Update(model.Origin{Endpoint: o.Endpoint, Name: fmt.Sprintf("vllm/127.0.0.1:%d", port), Source: model.SourcePrometheus})
			}
			m.Update(msg)
		}
		m.Update(tickMsg(at.Add(time.Second)))
	}
	m.Update(tea.KeyPressMsg{Code: 'F', Text: "F"})
	out := screen(t, m, 80, 24)
	for _, port := range []string{":8001", ":8002", ":8003", ":8004"} {
		if !strings.Contains(out, port) {
			t.Errorf("no replica named with %s:\n%s", port, out)
		}
	}
}

// Issue 31 item 21: a replica's screen in --prometheus mode. The top line
// and the Diagnosis pane named another replica's finding as if it were
// this one's; the header never named the replica; the GPU pane described
// this machine; the sources line said "logs ok" and the throughput "no
// finish reasons exposed" for numbers the source does not read; a window's
// extrapolated count read "84.8 requests".
func TestReplicaScreenThroughPrometheus(t *testing.T) {
	m := fleetModel(4)
	m.d.Sources["logs"] = ""
	m.Update(press("esc")) // from the fleet to the first replica's screen
	m.Update(tickMsg(t0.Add(62 * time.Second)))
	out := screen(t, m, 120, 40)
	ls := strings.Split(out, "\n")
	if !strings.Contains(ls[1], "prod/vllm-000 http://10.0.0.0:8000") {
		t.Errorf("the header does not name the replica: %q", ls[1])
	}
	if !strings.Contains(ls[2], "prod/vllm-003: TTFT over SLO") {
		t.Errorf("the top line does not name whose finding it is: %q", ls[2])
	}
	for _, want := range []string{"WARN prod/vllm-003: TTFT over SLO", "! prod/vllm-003: WARN opened: TTFT over SLO", "no GPU data for prod/vllm-000 (read via prometheus)",
		"finish -- (not read through prometheus)", "logs n/a for prod/vllm-000"} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"no finish reasons exposed", "logs ok", "no GPU source"} {
		if strings.Contains(out, bad) {
			t.Errorf("screen says %q:\n%s", bad, out)
		}
	}
	if got := requestCount(84.8); got != "≈85" {
		t.Errorf("84.8 requests read %q", got)
	}
}
