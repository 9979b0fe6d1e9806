//go:build engines

package engines

import (
	"context"
	"fmt"
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

// load sends small chat requests one after another until ctx ends (errors during a restart are
// expected and ignored).
func load(ctx context.Context, url, modelName string) {
	go func() {
		for ctx.Err() == nil {
			rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			if _, err := chat(rctx, url, modelName, "count to ten", 8, true); err != nil {
				time.Sleep(200 * time.Millisecond)
			}
			cancel()
		}
	}()
}

// A load test on llama-server: serve with -np 1, stop it (SIGTERM), start it again with -np 2 on
// the same port and log, then SIGKILL it. The core shows two runs, the first ended planned (its
// "cleaning up before exit" line) with the -np change in the config diff, and the killed one as a
// crash; no crash loop.
func TestRunsAcrossLlamaServerRestarts(t *testing.T) {
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	modelPath := writeModel(t, llamaShape)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	first := startPrivateLlama(t, bin, modelPath, port, "runs", "-np", "1", "-c", "2048")
	defer first.stop()
	w := watch(ctx, url, filepath.Join(workDir, "llama-server-runs.log"))
	load(ctx, url, "")

	w.await(t, url, "run 1 serving under load", 60*time.Second, func(runs []model.Run, e core.Endpoint) bool {
		return len(runs) == 1 && e.Life == model.LifeServing && runs[0].Summary.Samples > 8 && runs[0].Summary.RequestsPS.OK && runs[0].Summary.RequestsPS.V > 0
	})
	first.stop()
	w.await(t, url, "run 1 ended planned", 30*time.Second, func(runs []model.Run, e core.Endpoint) bool {
		return len(runs) >= 1 && runs[0].End == model.RunPlanned
	})

	second := startPrivateLlama(t, bin, modelPath, port, "runs", "-np", "2", "-c", "2048")
	defer second.stop()
	runs := w.await(t, url, "run 2 serving", 60*time.Second, func(runs []model.Run, e core.Endpoint) bool {
		return len(runs) == 2 && e.Life == model.LifeServing && runs[1].Summary.Samples > 2
	})
	if d := strings.Join(model.ConfigDiff(runs[0].Config, runs[1].Config), ", "); !strings.Contains(d, "log.n_slots 1 → 2") {
		t.Errorf("config diff %q, want log.n_slots 1 → 2 (run 1 %v, run 2 %v)", d, runs[0].Config, runs[1].Config)
	}
	if !strings.Contains(runs[1].StartedBy, "log start banner") {
		t.Errorf("run 2 started by %q, want the log's start line", runs[1].StartedBy)
	}

	_ = syscall.Kill(-second.cmd.Process.Pid, syscall.SIGKILL)
	runs = w.await(t, url, "run 2 ended as a crash (killed)", 30*time.Second, func(runs []model.Run, e core.Endpoint) bool {
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
