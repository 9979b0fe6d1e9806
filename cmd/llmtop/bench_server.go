package main

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench"
	"github.com/llmtop/llmtop/sources/bench/report"
	"github.com/llmtop/llmtop/sources/engine"
)

// serverView scrapes the benchmarked endpoint's own metrics while `llmtop
// bench` runs, so each result can carry the server's TTFT/ITL/queue over the
// run's window next to the client's numbers.
type serverView struct {
	mu        sync.Mutex
	store     *model.Store
	newest    time.Time
	simulated bool // the server said it is llmtop's simulator
	cancel    context.CancelFunc
	done      chan struct{}
	interval  time.Duration
}

const serverViewInterval = time.Second

func watchServer(ctx context.Context, cfg bench.Config) *serverView {
	ctx, cancel := context.WithCancel(ctx)
	v := &serverView{store: model.NewStore(model.DefaultStoreConfig), cancel: cancel,
		done: make(chan struct{}), interval: serverViewInterval}
	ecfg := engine.Config{URL: cfg.BaseURL(), Interval: v.interval, Timeout: 2 * time.Second, APIKey: cfg.APIKey,
		FollowRedirects: cfg.FollowRedirects}
	go func() {
		defer close(v.done)
		engine.NewPoller(ecfg).Run(ctx, func(sc model.Scrape) {
			v.mu.Lock()
			defer v.mu.Unlock()
			v.simulated = v.simulated || sc.Identity.Simulated
			for _, s := range sc.Samples {
				v.store.Add(s)
				if s.Time.After(v.newest) {
					v.newest = s.Time
				}
			}
		})
	}()
	return v
}

func (v *serverView) stop() {
	v.cancel()
	<-v.done
}

// key picks the store's series for the benchmarked model.
func (v *serverView) key(modelID string) (model.Key, bool) {
	keys := v.store.Keys()
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
		v.mu.Lock()
		fresh := !v.newest.Before(r.EndTime)
		v.mu.Unlock()
		if fresh || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.simulated {
		r.MarkSimulated()
	}
	k, ok := v.key(r.ModelID)
	if !ok {
		return
	}
	st := v.store.State(k, r.EndTime.Sub(r.StartTime)+v.interval)
	if st.Samples < 2 {
		return
	}
	r.Server = model.MetricsOf(st)
}

// waiting is the server's mean queue depth over [start, end] (NaN when
// unknown), from the scrapes taken in that window.
func (v *serverView) waiting(start, end time.Time) float64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	k, ok := v.key("")
	if !ok {
		return math.NaN()
	}
	var sum float64
	n := 0
	for _, p := range v.store.SeriesSince(k, string(model.Waiting), start) {
		if p.OK && !p.T.After(end) {
			sum += p.V
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
