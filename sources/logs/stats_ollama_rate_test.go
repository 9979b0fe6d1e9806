package logs

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Seen against a real Ollama 0.17.4: six /api/generate requests finished
// in one burst, their access-log lines read within 71 µs, and the
// throughput pane said "req 70.2k req/s · rates over 0ms" until the next
// request (the /api/ps polls between them gave no sample, so the burst's
// first line was the counter's baseline). The monitor's own polls, logged
// every refresh, are the baseline and the readings between bursts: six
// requests three seconds after following began are 2 req/s, and the rate
// falls while no request comes.
func TestOllamaBurstRateFromAccessLog(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 5, 1, 23, 400_000_000, time.UTC)
	clock := t0
	src := NewSource(Options{Endpoint: "http://127.0.0.1:11434", Now: func() time.Time { return clock }}, func(any) {})
	store := model.NewStore(model.DefaultStoreConfig)
	flush := func() { // what Run would deliver: the queued samples
		src.mu.Lock()
		q := src.queue
		src.queue = nil
		src.mu.Unlock()
		for _, m := range q {
			if sm, ok := m.(model.Sample); ok {
				store.Add(sm)
			}
		}
	}
	gin := func(at time.Time, path string) string {
		return at.Format("[GIN] 2006/01/02 - 15:04:05") + ` | 200 |  320.5ms |       127.0.0.1 | POST     "` + path + `"`
	}
	src.Line([]byte(gin(clock, "/api/ps")))
	clock = clock.Add(time.Second)
	src.Line([]byte(gin(clock, "/api/ps")))
	clock = clock.Add(2 * time.Second)
	for range 6 {
		clock = clock.Add(12 * time.Microsecond)
		src.Line([]byte(gin(clock, "/api/generate")))
	}
	flush()
	k := model.Key{Endpoint: "http://127.0.0.1:11434"}
	st := store.State(k, time.Minute)
	if !st.RequestsPS.OK || st.RequestsPS.V > 2.1 || st.RequestsPS.V < 1.9 {
		t.Fatalf("requests/s %v over %v, want 6 requests over the 3 s followed (2 req/s)", st.RequestsPS, st.RateWindow)
	}
	for range 27 {
		clock = clock.Add(time.Second)
		src.Line([]byte(gin(clock, "/api/ps")))
	}
	flush()
	if st := store.State(k, time.Minute); !st.RequestsPS.OK || st.RequestsPS.V > 0.21 {
		t.Errorf("requests/s %v 30 s on with no request, want 6 over 30 s (0.2)", st.RequestsPS)
	}
}
