//go:build engines

package engines

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmtop/llmtop/cmd/tinygguf/gguf"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/logs"
)

// watched is the monitor core fed by the real sources, as llmtop wires them: a poller on the
// endpoint and a follower on the engine's log file.
type watched struct {
	mu  sync.Mutex
	mon *core.Monitor
}

func watch(ctx context.Context, url, logPath string) *watched {
	w := &watched{mon: core.New(core.Options{Endpoints: []string{url}})}
	apply := func(msg any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if in, ok := msg.(model.Input); ok {
			w.mon.Apply(in)
		}
		w.mon.Tick(time.Now())
	}
	p := engine.NewPoller(engine.Config{URL: url, Interval: 250 * time.Millisecond, Timeout: 10 * time.Second})
	go p.Run(ctx, func(s model.Scrape) { apply(s) })
	logs.Start(ctx, logs.Input{File: logPath}, logs.Options{Endpoint: url}, apply)
	go func() { // the clock: the diagnosis and the runs move on time too
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				w.mu.Lock()
				w.mon.Tick(now)
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// await polls the core until ok holds for url's endpoint (runs and lifecycle), or fails the test.
func (w *watched) await(t *testing.T, url, what string, timeout time.Duration, ok func(runs []model.Run, e core.Endpoint) bool) []model.Run {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		w.mu.Lock()
		runs := w.mon.RunsOf(url)
		var e core.Endpoint
		if ep := w.mon.Endpoint(url); ep != nil {
			e = *ep
		}
		w.mu.Unlock()
		if ok(runs, e) {
			return runs
		}
		if time.Now().After(deadline) {
			w.mu.Lock()
			var evs []string
			for i := 0; i < w.mon.Events().Len() && i < 25; i++ {
				x := w.mon.Events().Newest(i)
				evs = append(evs, x.Time.Format("15:04:05.000")+" "+x.Kind+" "+x.Title)
			}
			w.mu.Unlock()
			t.Fatalf("never saw %s within %s; runs %+v, life %s (%s); newest events:\n%s", what, timeout, runs, e.Life, e.LifeDetail, strings.Join(evs, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// load sends small chat requests one after another until ctx ends or drain is called (errors
// during a restart are expected and ignored). drain stops sending and returns once the request
// in flight has ended.
func load(ctx context.Context, url, modelName string) (drain func()) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			select {
			case <-stop:
				return
			default:
			}
			rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			if _, err := chat(rctx, url, modelName, "count to ten", 8, true); err != nil {
				time.Sleep(200 * time.Millisecond)
			}
			cancel()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(stop) })
		<-done
	}
}

// awaitLlamaIdle waits until llama-server's own /metrics says no request is processing or
// deferred.
func awaitLlamaIdle(t *testing.T, ctx context.Context, url string, timeout time.Duration) {
	t.Helper()
	s := &server{URL: url}
	deadline := time.Now().Add(timeout)
	for {
		raw, _ := rawMetrics(t, ctx, s)
		if raw["llamacpp:requests_processing"] == 0 && raw["llamacpp:requests_deferred"] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("llama-server still busy %s after the load stopped: requests_processing %v, requests_deferred %v",
				timeout, raw["llamacpp:requests_processing"], raw["llamacpp:requests_deferred"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A load test on llama-server: serve with -np 1 under load, drain it and stop it (SIGTERM), start
// it again with -np 2 on the same port and log, serve it under load and SIGKILL it. The core shows
// two runs, the first ended planned (its "cleaning up before exit" line) with the -np change in
// the config diff, and the killed one as a crash; no crash loop.
//
// The planned stop is drained first, as an operator's is, because this llama-server cannot stop
// cleanly with requests in flight (seen with gdb on the cached build): its SIGTERM handler takes
// the task queue's lock, so a signal that lands while the main loop holds it deadlocks the
// server before it logs anything (server_queue::terminate called from signal_handler inside
// server_queue::yield_to_queue); and a stream in flight keeps an HTTP worker waiting for results
// the stopped queue never sends, so the exit waits until the client gives up. Under a steady
// stream of requests either happened in about one SIGTERM in ten, more on a busy machine: the
// stop had no shutdown line, and llmtop rightly called it a crash.
func TestRunsAcrossLlamaServerRestarts(t *testing.T) {
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	modelPath := writeModel(t, llamaShape)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	// Generous: each wait below is for a condition, and a loaded 2-core machine is slow to
	// start, serve and stop an engine.
	const wait = 2 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	first := startPrivateLlama(t, bin, modelPath, port, "runs", "-np", "1", "-c", "2048")
	defer first.stop()
	w := watch(ctx, url, first.logPath)
	drain := load(ctx, url, "")

	w.await(t, url, "run 1 serving under load", wait, func(runs []model.Run, e core.Endpoint) bool {
		return len(runs) == 1 && e.Life == model.LifeServing && runs[0].Summary.Samples > 8 && runs[0].Summary.RequestsPS.OK && runs[0].Summary.RequestsPS.V > 0
	})
	drain()
	http.DefaultClient.CloseIdleConnections()
	awaitLlamaIdle(t, ctx, url, wait)
	onTerm := first.stopWithin(30 * time.Second)
	// The log is read before the second server truncates it: without the engine's shutdown
	// line a planned stop cannot be told from a kill, and the check below would test the engine.
	if b, err := os.ReadFile(first.logPath); err != nil || !strings.Contains(string(b), "cleaning up before exit") {
		t.Fatalf("llama-server wrote no shutdown line on SIGTERM (exited on SIGTERM: %v; read: %v); log tail:\n%s", onTerm, err, first.logTail(20))
	}
	if !onTerm {
		t.Logf("llama-server logged its shutdown but had not exited 30 s after SIGTERM: killed")
	}
	w.await(t, url, "run 1 ended planned", wait, func(runs []model.Run, e core.Endpoint) bool {
		return len(runs) >= 1 && runs[0].End == model.RunPlanned
	})

	second := startPrivateLlama(t, bin, modelPath, port, "runs", "-np", "2", "-c", "2048")
	defer second.stop()
	load(ctx, url, "") // ends with ctx; the SIGKILL below is meant to hit requests in flight
	runs := w.await(t, url, "run 2 serving", wait, func(runs []model.Run, e core.Endpoint) bool {
		return len(runs) == 2 && e.Life == model.LifeServing && runs[1].Summary.Samples > 2
	})
	if d := strings.Join(model.ConfigDiff(runs[0].Config, runs[1].Config), ", "); !strings.Contains(d, "log.n_slots 1 → 2") {
		t.Errorf("config diff %q, want log.n_slots 1 → 2 (run 1 %v, run 2 %v)", d, runs[0].Config, runs[1].Config)
	}
	if !strings.Contains(runs[1].StartedBy, "log start banner") {
		t.Errorf("run 2 started by %q, want the log's start line", runs[1].StartedBy)
	}

	_ = syscall.Kill(-second.cmd.Process.Pid, syscall.SIGKILL)
	runs = w.await(t, url, "run 2 ended as a crash (killed)", wait, func(runs []model.Run, e core.Endpoint) bool {
		return len(runs) == 2 && runs[1].End == model.RunCrash && e.Life == model.LifeCrashed
	})
	if runs[0].End != model.RunPlanned {
		t.Errorf("run 1 end became %s", runs[0].End)
	}
	w.mu.Lock()
	for _, f := range w.mon.Report().Findings {
		if strings.Contains(f.Title, "crash loop") {
			t.Errorf("one planned restart and one kill made a crash loop: %+v", f)
		}
	}
	w.mu.Unlock()
}

// The same with Ollama: OLLAMA_NUM_PARALLEL 1 → 2 across a SIGTERM restart under load. Ollama logs
// nothing on SIGTERM, so the end is first unknown, then planned by the settings' change.
func TestRunsAcrossOllamaRestart(t *testing.T) {
	bin := engineBin(t, "LLMTOP_OLLAMA")
	modelPath := writeModel(t, gguf.Tiny)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	first, err := startOllamaWith(bin, modelPath, port, "ollama-runs", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Proc.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := watch(ctx, first.URL, filepath.Join(workDir, "ollama-runs.log"))
	load(ctx, first.URL, ollamaModel)
	w.await(t, first.URL, "run 1 serving", 90*time.Second, func(runs []model.Run, e core.Endpoint) bool {
		return len(runs) == 1 && e.Life == model.LifeServing && runs[0].Config["args.OLLAMA_NUM_PARALLEL"] == "1" && runs[0].Summary.Samples > 8
	})
	first.Proc.stop()
	second, err := startOllamaWith(bin, modelPath, port, "ollama-runs", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Proc.stop()
	runs := w.await(t, first.URL, "run 1 ended planned by the OLLAMA_NUM_PARALLEL change", 90*time.Second, func(runs []model.Run, e core.Endpoint) bool {
		return len(runs) == 2 && runs[0].End == model.RunPlanned && e.Life == model.LifeServing
	})
	if !strings.Contains(runs[0].EndReason, "args.OLLAMA_NUM_PARALLEL 1 → 2") {
		t.Errorf("run 1 ended %q, want the OLLAMA_NUM_PARALLEL change", runs[0].EndReason)
	}
}
