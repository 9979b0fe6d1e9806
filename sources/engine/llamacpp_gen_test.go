package engine

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// fakeLlama is a llama-server whose /metrics counter and /slots change
// between scrapes as a test says.
type fakeLlama struct {
	mu       sync.Mutex
	finished float64   // llamacpp:tokens_predicted_total
	busy     []float64 // n_decoded of each busy slot
	array    bool      // next_token as an array (node-llama-cpp builds)
}

func (f *fakeLlama) set(finished float64, busy ...float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished, f.busy = finished, busy
}

func (f *fakeLlama) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", enginetest.New(model.LlamaCpp))
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		fmt.Fprintf(w, "# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total %g\n", f.finished)
		fmt.Fprintf(w, "# TYPE llamacpp:tokens_predicted_seconds_total counter\nllamacpp:tokens_predicted_seconds_total %g\n", f.finished/100)
		fmt.Fprintf(w, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing %d\n", len(f.busy))
		fmt.Fprintf(w, "# TYPE llamacpp:predicted_tokens_seconds gauge\nllamacpp:predicted_tokens_seconds 0\n")
	})
	mux.HandleFunc("/slots", func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var parts []string
		for i := 0; i < 4; i++ {
			proc, n := i < len(f.busy), 7.0 // an idle slot keeps its last request's n_decoded
			if proc {
				n = f.busy[i]
			}
			next := fmt.Sprintf(`{"has_next_token":%v,"n_decoded":%g}`, proc, n)
			if f.array {
				next = "[" + next + "]"
			}
			parts = append(parts, fmt.Sprintf(`{"id":%d,"n_ctx":1024,"is_processing":%v,"n_prompt_tokens":10,"next_token":%s}`, i, proc, next))
		}
		fmt.Fprint(w, "["+strings.Join(parts, ",")+"]")
	})
	return mux
}

// Generated tokens move while slots generate, never go back on a dip (a
// slot released between the /metrics and /slots reads, a cancelled
// request), and go back — a restart the store sees — when the engine's own
// counter does.
func TestLlamaCppGenTokensInFlight(t *testing.T) {
	for _, array := range []bool{false, true} {
		t.Run(fmt.Sprintf("array=%v", array), func(t *testing.T) {
			f := &fakeLlama{array: array}
			s := newSession(Config{URL: serve(t, f.handler()), Engine: model.LlamaCpp})
			store := model.NewStore(model.StoreConfig{})
			steps := []struct {
				name     string
				finished float64
				busy     []float64
				want     float64
				restart  bool
			}{
				{"idle", 100, nil, 100, false},
				{"two slots generate", 100, []float64{10, 20}, 130, false},
				{"they go on", 100, []float64{15, 40}, 155, false},
				{"slot 0 finished (25 tokens) between scrapes", 125, []float64{50}, 175, false},
				{"slot 1 released after /metrics was read: in neither", 125, nil, 175, false},
				{"its 60 tokens reach the counter", 185, nil, 185, false},
				{"a new request", 185, []float64{30}, 215, false},
				{"its client went away: llama.cpp never counts it", 185, nil, 215, false},
				{"the counter is held until the real total passes it", 185, []float64{20}, 215, false},
				{"and then moves again", 185, []float64{40}, 225, false},
				{"engine restarted, one request in flight", 0, []float64{5}, 5, true},
				{"after the restart it counts afresh", 0, []float64{9}, 9, false},
			}
			t0 := time.Now()
			for i, st := range steps {
				f.set(st.finished, st.busy...)
				sc := s.scrape(context.Background())
				sm := only(t, sc.Samples)
				if got := sm.Counters[model.GenTokens]; got != st.want {
					t.Errorf("%s: generated tokens %v, want %v", st.name, got, st.want)
				}
				// TPOT is the engine's seconds over its own (finished) tokens.
				if tp := sm.Latencies[model.TPOT]; st.finished > 0 && tp.Count != st.finished {
					t.Errorf("%s: TPOT over %v tokens, want the finished %v", st.name, tp.Count, st.finished)
				}
				if !strings.Contains(strings.Join(sm.Notes, "|"), llamaGenNote) {
					t.Errorf("%s: notes %q lack the in-flight note", st.name, sm.Notes)
				}
				sm.Time = t0.Add(time.Duration(i) * time.Second)
				restarted := false
				for _, e := range store.Add(sm) {
					restarted = restarted || e.Kind == model.KindRestart
				}
				if restarted != st.restart {
					t.Errorf("%s: store saw a restart: %v, want %v", st.name, restarted, st.restart)
				}
			}
		})
	}
}

// A scrape that found the endpoint down starts the counter afresh, even when
// the restarted engine's counter happens not to be below the old one.
func TestGenCounterRestartAfterDown(t *testing.T) {
	var g genCounter
	for _, c := range []struct {
		finished, inFlight float64
		down               bool
		want               float64
	}{
		{0, 500, false, 500},
		{0, 0, false, 500}, // a dip: held
		{0, 30, true, 30},  // down since the last scrape: a restart
		{0, 40, false, 40},
	} {
		if got := g.next(c.finished, c.inFlight, c.down); got != c.want {
			t.Errorf("next(%v, %v, %v) = %v, want %v", c.finished, c.inFlight, c.down, got, c.want)
		}
	}
}

// Without /slots (started with --no-slots) the counter is llama.cpp's own.
func TestLlamaCppGenTokensWithoutSlots(t *testing.T) {
	f := &fakeLlama{}
	mux := http.NewServeMux()
	mux.Handle("/", f.handler())
	mux.Handle("/slots", status(http.StatusNotImplemented))
	s := newSession(Config{URL: serve(t, mux), Engine: model.LlamaCpp})
	f.set(42, 10)
	sm := only(t, s.scrape(context.Background()).Samples)
	if got := sm.Counters[model.GenTokens]; got != 42 {
		t.Errorf("generated tokens %v, want the engine's 42", got)
	}
	if strings.Contains(strings.Join(sm.Notes, "|"), llamaGenNote) {
		t.Errorf("notes %q claim in-flight tokens without /slots", sm.Notes)
	}
}

// The slot count is the concurrency cap (model.MaxRunning) whether KV usage
// comes from /slots or from an older build's kv_cache_usage_ratio, and from
// /props total_slots when /slots is off.
func TestLlamaCppMaxRunning(t *testing.T) {
	for _, c := range []struct {
		name     string
		kvMetric bool
		slotsOff bool
		want     float64
	}{
		{"KV from /slots", false, false, 4},
		{"older build with kv_cache_usage_ratio", true, false, 4},
		{"/slots off: /props total_slots", true, true, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeLlama{}
			mux := http.NewServeMux()
			mux.Handle("/", f.handler())
			if c.kvMetric {
				inner := f.handler()
				mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
					inner.ServeHTTP(w, r)
					fmt.Fprint(w, "# TYPE llamacpp:kv_cache_usage_ratio gauge\nllamacpp:kv_cache_usage_ratio 0.25\n")
				})
			}
			if c.slotsOff {
				mux.Handle("/slots", status(http.StatusNotImplemented))
			}
			s := newSession(Config{URL: serve(t, mux), Engine: model.LlamaCpp})
			f.set(10, 3)
			sm := only(t, s.scrape(context.Background()).Samples)
			if got, ok := sm.Gauges[model.MaxRunning]; !ok || got != c.want {
				t.Errorf("max running %v (set %v), want %v", got, ok, c.want)
			}
		})
	}
}
