//go:build engines

package engines

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/logs"
)

// matchLog runs the log catalogue over every line of an engine's log so far: kind → matches.
func matchLog(t *testing.T, p *proc) (map[string][]logs.Match, []string) {
	t.Helper()
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]logs.Match{}
	var lines []string
	for _, raw := range strings.Split(string(b), "\n") {
		line := model.SanitizeLine([]byte(raw))
		lines = append(lines, line)
		if mt, ok := logs.DefaultMatcher.Match(line); ok {
			out[mt.Pattern.ID] = append(out[mt.Pattern.ID], mt)
		}
	}
	return out, lines
}

// noFalseAlarms fails on warn/crit events raised by a healthy engine's log.
func noFalseAlarms(t *testing.T, got map[string][]logs.Match, lines []string) {
	t.Helper()
	for id, ms := range got {
		if sev := ms[0].Pattern.Sev; sev == model.SevWarn || sev == model.SevCrit {
			t.Errorf("a healthy engine's log raised %s %s (%d×), e.g. fields %v", sev, id, len(ms), ms[0].Fields)
		}
	}
}

func TestLogsLlamaServerStartup(t *testing.T) {
	s := llama(t)
	got, lines := matchLog(t, s.Proc)
	noFalseAlarms(t, got, lines)
	if ms := got["llamacpp_slots"]; len(ms) != 1 || ms[0].Fields["n_slots"] != fmt.Sprint(llamaSlots) || ms[0].Fields["n_ctx_slot"] != fmt.Sprint(llamaCtx/llamaSlots) {
		t.Errorf("slots line: %+v; want n_slots %d, n_ctx_slot %d", ms, llamaSlots, llamaCtx/llamaSlots)
	}
	if ms := got["llamacpp_listening"]; len(ms) != 1 || !strings.HasSuffix(ms[0].Fields["address"], fmt.Sprintf(":%d", s.Port)) {
		t.Errorf("listening line: %+v; want the address with port %d", ms, s.Port)
	}
	if len(got["llamacpp_model_loaded"]) != 1 {
		t.Errorf("model loaded line matched %d times", len(got["llamacpp_model_loaded"]))
	}
}

// TestLogsLlamaServerTimings follows the real log while requests run and checks the log-derived
// sample (print_timing lines) against what the engine answered.
func TestLogsLlamaServerTimings(t *testing.T) {
	s := llama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var samples []model.Sample
	var lines []model.LogLine
	src := logs.NewSource(logs.Options{Endpoint: s.URL}, func(m any) {
		mu.Lock()
		defer mu.Unlock()
		switch v := m.(type) {
		case model.Sample:
			samples = append(samples, v)
		case model.LogLine:
			lines = append(lines, v)
		}
	})
	go src.Run(ctx)
	go logs.FollowFile(ctx, s.Proc.logPath, logs.FileOptions{Backlog: -1, Poll: 50 * time.Millisecond}, src)
	latest := func() model.Sample {
		mu.Lock()
		defer mu.Unlock()
		if len(samples) == 0 {
			return model.Sample{Counters: map[model.Counter]float64{}, Latencies: map[model.Latency]model.Histogram{}}
		}
		return samples[len(samples)-1]
	}
	// Let the follower open the file and read whatever it reads of the past.
	time.Sleep(500 * time.Millisecond)
	base := latest()
	if base.Counters[model.Requests] > 0 {
		t.Errorf("FileOptions{Backlog: -1} is documented as \"start at the end\", yet the follower read the old log (%v earlier requests counted)",
			base.Counters[model.Requests])
	}

	const n, maxTokens = 3, 20
	var promptN int
	var predictedMS float64
	for i := 0; i < n; i++ {
		res, err := chat(ctx, s.URL, "", fmt.Sprintf("log timing %d %d", i, time.Now().UnixNano()), maxTokens, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Timings == nil {
			t.Fatal("no timings in the answer")
		}
		promptN += res.Timings.PromptN
		predictedMS += res.Timings.PredictedMS
	}
	var last model.Sample
	for {
		last = latest()
		if last.Counters[model.Requests] >= base.Counters[model.Requests]+n {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("log-derived samples never counted %d more requests; last %+v", n, last.Counters)
		case <-time.After(50 * time.Millisecond):
		}
	}
	delta := func(c model.Counter) float64 { return last.Counters[c] - base.Counters[c] }
	if last.Source != model.FromLog || delta(model.Requests) != n {
		t.Fatalf("log sample source %q counted %v requests, want log and %d", last.Source, delta(model.Requests), n)
	}
	if delta(model.GenTokens) != n*maxTokens || delta(model.PromptTokens) != float64(promptN) {
		t.Errorf("log counted %v generated / %v prompt tokens; the engine answered %d / %d", delta(model.GenTokens), delta(model.PromptTokens), n*maxTokens, promptN)
	}
	dec, ok := last.Latencies[model.Decode]
	dCount, dSumMS := dec.Count-base.Latencies[model.Decode].Count, (dec.Sum-base.Latencies[model.Decode].Sum)*1000
	if !ok || dCount != n || math.Abs(dSumMS-predictedMS) > 0.05*float64(n) {
		t.Errorf("log decode latency: %v more requests, %.2f ms more; the answers' timings.predicted_ms add up to %.2f ms over %d requests", dCount, dSumMS, predictedMS, n)
	}
	mu.Lock()
	defer mu.Unlock()
	now := time.Now()
	for _, ll := range lines {
		// llama-server prefixes lines with time since start ("0.00.244.942 I …"), not a wall clock.
		if d := now.Sub(ll.Time); d < -time.Minute || d > 10*time.Minute {
			t.Errorf("line time %v is %v away from now: %q", ll.Time, d, ll.Text)
			break
		}
	}
}

func TestLogsOllama(t *testing.T) {
	s := ollama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Make sure a model load happened in this log.
	unloadOllama(t, s)
	if _, err := chat(ctx, s.URL, ollamaModel, "log me", 4, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	got, lines := matchLog(t, s.Proc)
	noFalseAlarms(t, got, lines)
	if ms := got["ollama_listening"]; len(ms) != 1 || ms[0].Fields["version"] != s.Version || !strings.HasSuffix(ms[0].Fields["address"], fmt.Sprintf(":%d", s.Port)) {
		t.Errorf("listening line: %+v; want version %s and port %d", ms, s.Version, s.Port)
	}
	if ms := got["ollama_default_context"]; len(ms) != 1 || ms[0].Fields["default_num_ctx"] != "4096" {
		t.Errorf("default context line: %+v", ms)
	} else if v := ms[0].Fields["total_vram"]; v == "" || strings.ContainsAny(v, `"`) || !strings.HasSuffix(v, "B") {
		t.Errorf("total_vram extracted as %q from logfmt `total_vram=\"… B\"`; want the whole unquoted value", v)
	}
	if len(got["ollama_runner_started"]) == 0 {
		var seen string
		for _, l := range lines {
			if strings.Contains(l, "runner started in") {
				seen = l
				break
			}
		}
		t.Errorf("no match for the model-load line; Ollama %s writes %q", s.Version, seen)
	}
}
