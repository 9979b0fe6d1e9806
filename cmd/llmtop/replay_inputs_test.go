package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/behaviour"
	"github.com/llmtop/llmtop/sources/engine"
)

// liveAndReplayed feeds the inputs into a live core (each applied, then the
// clock) while recording them, replays the recording into a fresh core as
// `llmtop replay` does, and returns both.
func liveAndReplayed(t *testing.T, urls []string, steps [][]model.Input, times []time.Time) (live, replayed *core.Monitor) {
	t.Helper()
	cfg := diagnosis.DefaultConfig()
	var file bytes.Buffer
	h := recording.Header{Face: "monitor", Started: times[0], Endpoints: urls,
		Interval: recording.Duration(time.Second), Window: recording.Duration(time.Minute), Diagnosis: &cfg}
	w, err := recording.NewWriter(&file, h)
	if err != nil {
		t.Fatal(err)
	}
	live = session.ReplayCore(h)
	for i, step := range steps {
		for _, in := range step {
			if ok, err := w.Write(times[i], in); err != nil || !ok {
				t.Fatalf("%T not recorded: %v", in, err)
			}
			live.Apply(in)
			live.Tick(times[i])
		}
		w.Write(times[i], recording.Tick{})
		live.Tick(times[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := recording.NewReader(&file, "mem")
	if err != nil {
		t.Fatal(err)
	}
	replayed = session.ReplayCore(r.Header())
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		session.Feed(replayed, rec)
	}
	return live, replayed
}

func reportIDs(c *core.Monitor) []string {
	var ids []string
	for _, f := range c.Report().Findings {
		ids = append(ids, f.Endpoint+" "+f.ID)
	}
	slices.Sort(ids)
	return ids
}

// Issue 30: a --prometheus recording in which a target leaves the fleet
// (a pod deleted) replays with the target gone, as the live monitor showed
// it. Before, the fleet's refresh (model.Batch, with model.Origin) was not
// recorded: the replay kept the deleted pod frozen at its last numbers.
func TestReplayOfAFleetDropsTheTargetThatLeft(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	a, b := "http://10.0.0.1:8000", "http://10.0.0.2:8000"
	origin := func(u, name string, gone bool) model.Origin {
		o := model.Origin{Endpoint: u, Name: name, Source: model.SourcePrometheus, Via: "http://prom:9090", Gone: gone}
		if gone {
			o.GoneWhy = "no longer among Prometheus's targets"
		}
		return o
	}
	scrape := func(u string, at time.Time, running float64) model.Scrape {
		s := model.NewSample(u, "m", at, model.FromScrape)
		s.Gauges[model.Running] = running
		s.Gauges[model.KVUsage] = 0.5
		return model.Scrape{Endpoint: u, Time: at, Identity: model.Identity{Engine: model.VLLM, Models: []model.ModelInfo{{ID: "m"}}}, Samples: []model.Sample{s}}
	}
	var steps [][]model.Input
	var times []time.Time
	for i := range 5 {
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		step := []model.Input{origin(a, "prod/vllm-0", false), scrape(a, at, 4)}
		if i < 3 {
			step = append(step, origin(b, "prod/vllm-1", false), scrape(b, at, 6))
		} else {
			step = append(step, origin(b, "prod/vllm-1", true))
		}
		// as the Prometheus source sends a refresh: one batch
		steps, times = append(steps, []model.Input{model.Batch(step)}), append(times, at)
	}
	live, replayed := liveAndReplayed(t, []string{a, b}, steps, times)
	for _, c := range []*core.Monitor{live, replayed} {
		e := c.Endpoint(b)
		if e == nil || e.Origin == nil || !e.Origin.Gone || e.Life != model.LifeGone {
			t.Fatalf("the departed target is not gone: %+v", e)
		}
		if n := len(c.Store().Keys()); n != 1 {
			t.Errorf("%d series kept, want the remaining target's one", n)
		}
	}
	if lf, rf := reportIDs(live), reportIDs(replayed); !slices.Equal(lf, rf) {
		t.Errorf("findings differ:\nlive   %v\nreplay %v", lf, rf)
	}
}

// A recording with a behaviour probe (the monitor's o) replays the probe's
// findings, as does one with an acknowledgement: the top finding the
// person acknowledged stays acknowledged in the replay. Before, the probe's
// result was not recorded and the replay never judged it.
func TestReplayOfAProbeGivesItsFindings(t *testing.T) {
	url := serveSim(t, sim.WrongTemplate)
	waitHealthy(t, url)
	ctx := context.Background()
	sc := engine.ScrapeOnce(ctx, engine.Config{URL: url})
	if !sc.OK() {
		t.Fatalf("scrape: %s", sc.Err)
	}
	cfg, err := probeConfig(url, "", true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := behaviour.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.Endpoint = sc.Endpoint
	t0 := sc.Time
	b.Time = t0.Add(time.Second)
	sc2 := engine.ScrapeOnce(ctx, engine.Config{URL: url})
	sc2.Time = t0.Add(2 * time.Second)
	for i := range sc2.Samples {
		sc2.Samples[i].Time = sc2.Time
	}
	steps := [][]model.Input{{sc}, {b}, {sc2}, {model.Ack{Time: t0.Add(3 * time.Second), Endpoint: sc.Endpoint, Finding: "probe_template"}}}
	times := []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second), t0.Add(3 * time.Second)}
	live, replayed := liveAndReplayed(t, []string{sc.Endpoint}, steps, times)
	if !slices.Contains(reportIDs(live), sc.Endpoint+" probe_template") {
		t.Fatalf("the live core did not judge the probe: %v", reportIDs(live))
	}
	if lf, rf := reportIDs(live), reportIDs(replayed); !slices.Equal(lf, rf) {
		t.Errorf("findings differ:\nlive   %v\nreplay %v", lf, rf)
	}
	for _, c := range []*core.Monitor{live, replayed} {
		for _, f := range c.Report().Findings {
			if f.ID == "probe_template" && !f.Acked {
				t.Errorf("probe_template is not acknowledged: %+v", f)
			}
		}
	}
}
