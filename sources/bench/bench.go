// Package bench is llmtop's load generator: it streams requests at an
// OpenAI-compatible (/v1/chat/completions, /v1/completions, SSE) or Ollama
// (/api/generate, /api/chat, NDJSON) endpoint in a closed loop (N streams)
// or an open loop (a request rate), times every chunk as its line arrives,
// and reports `vllm bench serve`'s metrics (package report). Sweep steps
// the load up to the knee.
package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench/report"
	"github.com/llmtop/llmtop/sources/probe"
)

// Run runs one benchmark and returns its result. Cancelling ctx aborts the
// requests in flight and returns what was measured so far (the aborted ones
// counted as cancelled). onProgress, when set, is called a few times a
// second from another goroutine, and once at the end.
//
// An error means the run could not start (bad configuration, no model
// found); failing requests are results, counted by kind.
func Run(ctx context.Context, cfg Config, onProgress func(Progress)) (report.Result, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return report.Result{}, err
	}
	var arr *arrivals
	if !cfg.Rate.IsInf() || cfg.AllAtOnce() {
		var err error
		if arr, err = newArrivals(float64(cfg.Rate), cfg.Burstiness, cfg.Seed); err != nil {
			return report.Result{}, err
		}
	}
	client := cfg.Client
	if client == nil {
		client = newClient(max(cfg.streams(), cfg.Warmup))
		client.CheckRedirect = probe.CheckRedirect(cfg.FollowRedirects)
	}
	base := cfg.BaseURL()
	// The key goes only to the endpoint's scheme, host and port, redirects
	// included (probe.Bearer: the one credential rule).
	guarded := *client
	guarded.Transport = probe.Bearer(client.Transport, base, cfg.APIKey)
	client = &guarded
	mdl := cfg.Model
	if mdl == "" {
		var err error
		if mdl, err = discoverModel(ctx, client, &cfg); err != nil {
			return report.Result{}, err
		}
	}
	r := &runState{
		cfg: &cfg, model: mdl, extras: !cfg.NoExtras && !cfg.API.ndjson(), warmup: true,
		q: &requester{client: client, url: cfg.endpoint(cfg.API.Path()), api: cfg.API, timeout: cfg.Timeout},
	}
	info := report.Info{
		Backend: cfg.API.Backend(), BaseURL: base, Endpoint: cfg.API.Path(), ModelID: mdl,
		RequestRate: cfg.Rate, Burstiness: cfg.Burstiness, MaxConcurrency: cfg.Concurrency,
		InputLen: cfg.InputLen, OutputLen: cfg.OutputLen, PrefixLen: cfg.PrefixLen, Warmup: cfg.Warmup,
	}
	if cfg.SLO.TTFT > 0 {
		info.SLOTTFTms = model.Some(float64(cfg.SLO.TTFT) / 1e6)
	}
	if cfg.SLO.TPOT > 0 {
		info.SLOTPOTms = model.Some(float64(cfg.SLO.TPOT) / 1e6)
	}

	stopProgress := r.reportProgress(onProgress)
	defer stopProgress()

	if cfg.Warmup > 0 {
		notes, warm := r.warmUp(ctx)
		info.Notes = append(info.Notes, notes...)
		if !warm {
			now := time.Now()
			res := report.Result{Info: info, Metrics: report.Compute(nil, 0, cfg.SLO)}
			res.StartTime, res.EndTime, res.Date = now, now, now.Local().Format("20060102-150405")
			return res, nil
		}
	}
	if cfg.NumRequests > 0 && cfg.NumRequests <= prebuildMax {
		r.bodies = make([][]byte, cfg.NumRequests)
		for i := range r.bodies {
			r.bodies[i] = cfg.body(mdl, i, r.extras)
		}
	}
	info.IgnoreEOS = r.extras

	send, stop := context.WithCancel(ctx)
	defer stop()
	r.mu.Lock()
	r.warmup, r.recs, r.completed, r.failed, r.outTokens = false, nil, 0, 0, 0
	r.ttftMS, r.tpotMS, r.refusedInRow, r.stopSending = nil, nil, 0, stop
	r.start = time.Now()
	r.mu.Unlock()
	r.sent.Store(0)
	// Sending stops at the deadline; the requests still in flight Grace
	// later are stopped (reqs ends), whatever the server does.
	var deadline time.Time
	reqs := ctx
	if cfg.Duration > 0 {
		deadline = r.start.Add(cfg.Duration)
		var stopReqs context.CancelFunc
		reqs, stopReqs = context.WithDeadline(ctx, deadline.Add(cfg.Grace))
		defer stopReqs()
	}
	if arr == nil {
		r.closedLoop(reqs, send, cfg.Concurrency, cfg.NumRequests, 0, deadline)
	} else {
		// A finite rate, or all at once (zero gaps, no cap, NumRequests).
		r.openLoop(reqs, send, arr, cfg.Concurrency, cfg.NumRequests, deadline)
	}
	end := time.Now()
	cut := ctx.Err() == nil && reqs.Err() != nil

	r.mu.Lock()
	recs, why := r.recs, r.stoppedBecause
	r.mu.Unlock()
	res := report.Result{Info: info, Metrics: report.Compute(recs, end.Sub(r.start), cfg.SLO)}
	res.NumPrompts = len(recs)
	res.StartTime, res.EndTime = r.start, end
	res.Date = r.start.Local().Format("20060102-150405")
	if why != "" {
		res.Notes = append(res.Notes, why)
	}
	if cut && res.Cancelled > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d requests still in flight %s after the end were stopped: counted as cancelled, not failed (--grace)",
			res.Cancelled, cfg.Grace))
	}
	if ctx.Err() != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("cancelled after %.1fs: partial results; the %d requests in flight then are counted as cancelled",
			end.Sub(r.start).Seconds(), res.Cancelled))
	}
	if note := refusedExtras(r, res.Metrics); note != "" {
		res.Notes = append(res.Notes, note)
	}
	if res.OutputTokensFromChunks > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d responses had no usage: their output tokens are content chunks counted", res.OutputTokensFromChunks))
	}
	return cleanResult(res), nil
}

// warmUp sends the warmup requests, the first one alone as a probe. They
// may take Timeout together, and no longer than the run's Duration: a
// server that answers none of them by then is not measured (warm false,
// with a note saying why), so a hung server costs that long and no more.
func (r *runState) warmUp(ctx context.Context) (notes []string, warm bool) {
	limit := r.cfg.Timeout
	if r.cfg.Duration > 0 {
		limit = min(limit, r.cfg.Duration)
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	notes = r.probe(wctx)
	if r.cfg.Warmup > 1 && wctx.Err() == nil {
		r.closedLoop(wctx, wctx, min(max(r.cfg.streams(), 1), r.cfg.Warmup-1), r.cfg.Warmup-1, warmupBase+1, time.Time{})
	}
	r.mu.Lock()
	done := r.completed + r.failed
	r.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return append(notes, "cancelled during the warmup: nothing measured"), false
	case wctx.Err() != nil && done == 0:
		return append(notes, fmt.Sprintf("no warmup request finished within %s (the warmup's limit: --timeout, or --duration when shorter): nothing measured", limit)), false
	}
	return notes, true
}

// refusedExtras explains a run with extras in which every request was
// refused with 400/422 before any succeeded: without a warmup nothing
// probed whether the server takes ignore_eos/min_tokens.
func refusedExtras(r *runState, m report.Metrics) string {
	if !r.extras || r.cfg.Warmup > 0 || m.Completed > 0 || m.Failed == 0 ||
		m.ErrorsByKind["http_400"]+m.ErrorsByKind["http_422"] != m.Failed {
		return ""
	}
	return "every request was refused with 400/422: the server may not take ignore_eos/min_tokens; " +
		"try --no-extras, or --warmup 1 (the warmup probes them)"
}

// probe sends the first warmup request. When the server refuses the extra
// fields (ignore_eos, min_tokens) with 400/422, it retries without them and
// the run goes on without them.
func (r *runState) probe(ctx context.Context) []string {
	rec := r.one(ctx, warmupBase, 0)
	if r.extras && !rec.OK && rec.Err == report.ErrHTTP && (rec.Status == 400 || rec.Status == 422) {
		r.extras = false
		if rec2 := r.one(ctx, warmupBase, 0); rec2.OK {
			return []string{"the server refused ignore_eos/min_tokens: sent without them, so answers may be shorter than output_len"}
		}
		r.extras = true
	}
	return nil
}

// reportProgress calls fn every 250 ms until the returned stop is called,
// which also makes the final call.
func (r *runState) reportProgress(fn func(Progress)) (stop func()) {
	if fn == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fn(r.progress())
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		fn(r.progress())
	}
}
