package main

import (
	"context"
	"math"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/bench"
	"github.com/llmtop/llmtop/sources/bench/report"
	"github.com/llmtop/llmtop/sources/engine"
)

// serverView scrapes the benchmarked endpoint's own metrics while `llmtop
// bench` runs, so each result can carry the server's TTFT/ITL/queue over the
// run's window next to the client's numbers. The scrapes go into a core
// driven by a session, as in every face (no store of its own).
type serverView struct {
	sess      *session.Session
	id        string // the core's name for the endpoint
	simulated bool   // the server said it is llmtop's simulator (read at attach)
	interval  time.Duration
}

const serverViewInterval = time.Second

func watchServer(ctx context.Context, cfg bench.Config) *serverView {
	base := cfg.BaseURL()
	v := &serverView{id: model.RedactURL(base), interval: serverViewInterval}
	ecfg := engine.Config{URL: base, Interval: v.interval, Timeout: 2 * time.Second, APIKey: cfg.APIKey,
		FollowRedirects: cfg.FollowRedirects}
	scrapes := session.Source{Name: "engine", Start: func(ctx context.Context, env *session.Env) error {
		done := make(chan struct{})
		env.Stopped = append(env.Stopped, done)
		go func() {
			defer close(done)
			engine.NewPoller(ecfg).Run(ctx, func(sc model.Scrape) { env.Send(withEndpoint(sc, v.id)) })
		}()
		return nil
	}}
	v.sess = session.New(session.Options{
		Core:    core.Options{Endpoints: []string{v.id}},
		Env:     session.Env{URLs: []string{base}, Interval: v.interval},
		Sources: []session.Source{scrapes},
	})
	_ = v.sess.Start(ctx) // the source cannot fail to start
	return v
}

func (v *serverView) stop() { v.sess.Close(quitWait) }

// with runs f with the core: on the session's goroutine while it runs,
// here once it has stopped.
func (v *serverView) with(f func(mon *core.Monitor)) {
	if !v.sess.Do(f) {
		f(v.sess.Core())
	}
}

// key picks the store's series for the benchmarked model.
func (v *serverView) key(st *model.Store, modelID string) (model.Key, bool) {
	keys := st.Keys()
	for _, k := range keys {
		if k.Model == modelID {
			return k, true
		}
	}
	if len(keys) == 1 {
		return keys[0], true
	}
	return model.Key{}, false
}

// attach sets r.Server to the server's state over the run's window, after
// waiting (at most one interval) for a scrape taken after the run ended.
// Nothing is attached when the endpoint exposes no metrics.
func (v *serverView) attach(r *report.Result) {
	if v == nil {
		return
	}
	deadline := time.Now().Add(v.interval + 500*time.Millisecond)
	for {
		fresh := false
		v.with(func(mon *core.Monitor) {
			if ep := mon.Endpoint(v.id); ep != nil {
				fresh = !ep.LastOK.Before(r.EndTime)
			}
		})
		if fresh || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	v.with(func(mon *core.Monitor) {
		var name string
		var eng model.Engine
		if ep := mon.Endpoint(v.id); ep != nil {
			v.simulated = v.simulated || ep.Identity.Simulated
			eng, name = ep.Identity.Engine, string(ep.Identity.Engine)
			if s := engines.Of(ep.Identity.Engine); s != nil {
				name = s.Name
			}
		}
		if v.simulated {
			r.MarkSimulated()
		}
		// Without the server's view the result says why (llama-server
		// without --metrics answers 501): the server lines were just gone.
		noView := func() {
			if ep := mon.Endpoint(v.id); ep != nil && ep.Err != "" {
				note := "no server view: " + ep.Err
				if ep.Hint != "" {
					note += " (" + ep.Hint + ")"
				}
				r.Notes = append(r.Notes, note)
			}
		}
		k, ok := v.key(mon.Store(), r.ModelID)
		if !ok {
			noView()
			return
		}
		st := mon.Store().State(k, r.EndTime.Sub(r.StartTime)+v.interval)
		if st.Samples < 2 {
			noView()
			return
		}
		r.Server, r.ServerEngine = core.MetricsOf(st, eng), name
	})
}

// waiting is the server's mean queue depth over [start, end] (NaN when
// unknown), from the scrapes taken in that window.
func (v *serverView) waiting(start, end time.Time) float64 {
	mean := math.NaN()
	v.with(func(mon *core.Monitor) {
		k, ok := v.key(mon.Store(), "")
		if !ok {
			return
		}
		var sum float64
		n := 0
		for _, p := range mon.Store().SeriesSince(k, string(model.Waiting), start) {
			if p.OK && !p.T.After(end) {
				sum += p.V
				n++
			}
		}
		if n > 0 {
			mean = sum / float64(n)
		}
	})
	return mean
}
