package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// scrapes runs a poller until it delivered n scrapes.
func scrapes(t *testing.T, p *Poller, n int, between func(i int)) []model.Scrape {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []model.Scrape
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx, func(sc model.Scrape) {
			out = append(out, sc)
			if len(out) == n {
				cancel()
				return
			}
			between(len(out))
		})
	}()
	<-done
	if len(out) != n {
		t.Fatalf("got %d scrapes, want %d", len(out), n)
	}
	return out
}

const resetBody1 = `# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} 1000.0
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{engine="0",le="1.0",model_name="m"} 10.0
vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="m"} 20.0
vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"} 20.0
vllm:e2e_request_latency_seconds_sum{engine="0",model_name="m"} 30.0
`

// The engine restarts between two polls (counters back near zero), then its
// upgrade brings different histogram buckets: the store sees a restart and
// a bucket change, and no rate goes negative.
func TestPollerResetAndBucketChange(t *testing.T) {
	fake := enginetest.New(model.VLLM)
	fake.SetMetrics([]byte(resetBody1))
	url := serve(t, fake)
	p := NewPoller(Config{URL: url, Interval: MinInterval})
	bodies := map[int]string{
		1: `# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} 50.0
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{engine="0",le="1.0",model_name="m"} 1.0
vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="m"} 1.0
vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"} 1.0
vllm:e2e_request_latency_seconds_sum{engine="0",model_name="m"} 0.5
`,
		2: `# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} 80.0
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{engine="0",le="0.5",model_name="m"} 1.0
vllm:e2e_request_latency_seconds_bucket{engine="0",le="2.0",model_name="m"} 3.0
vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="m"} 3.0
vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"} 3.0
vllm:e2e_request_latency_seconds_sum{engine="0",model_name="m"} 2.5
`,
	}
	got := scrapes(t, p, 3, func(i int) { fake.SetMetrics([]byte(bodies[i])) })
	store := model.NewStore(model.DefaultStoreConfig)
	kinds := map[string]bool{}
	for _, sc := range got {
		if !sc.OK() {
			t.Fatalf("scrape failed: %s", sc.Err)
		}
		for _, s := range sc.Samples {
			for _, ev := range store.Add(s) {
				kinds[ev.Kind] = true
			}
		}
	}
	if !kinds[model.KindRestart] || !kinds[model.KindBucketsChanged] {
		t.Errorf("events = %v, want restart and buckets_changed", kinds)
	}
	st := store.State(model.Key{Endpoint: url, Model: "m"}, time.Minute)
	if !st.GenTPS.OK || st.GenTPS.V < 0 {
		t.Errorf("gen tok/s = %+v, want a non-negative rate", st.GenTPS)
	}
	for _, pt := range store.Series(model.Key{Endpoint: url, Model: "m"}, model.SeriesGenTPS) {
		if pt.OK && pt.V < 0 {
			t.Errorf("negative rate point %+v", pt)
		}
	}
}

// SetInterval is safe from another goroutine while Run polls, and Run stops
// when its context ends.
func TestPollerSetIntervalAndStop(t *testing.T) {
	url := serve(t, enginetest.New(model.VLLM))
	p := NewPoller(Config{URL: url, Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	n := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx, func(model.Scrape) {
			mu.Lock()
			n++
			mu.Unlock()
		})
	}()
	// With an hour-long interval only the first poll happens until the
	// interval shrinks.
	deadline := time.Now().Add(10 * time.Second)
	p.SetInterval(time.Millisecond) // clamped to 250 ms
	for {
		mu.Lock()
		c := n
		mu.Unlock()
		if c >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if n < 2 {
		t.Errorf("polls = %d after shortening the interval, want ≥ 2", n)
	}
	if d := time.Duration(p.interval.Load()); d != MinInterval {
		t.Errorf("interval = %v, want clamp to %v", d, MinInterval)
	}
}

// Polls fall on the beat grid (package beat), where the log's poll, the
// host's look and the screen's clock are due too: the poll after one that
// started at any moment is due at a whole multiple of the interval, at
// least half an interval later; one that started on the grid is followed
// an interval later.
func TestPollerPollsOnTheBeat(t *testing.T) {
	base := time.Date(2026, 11, 26, 23, 0, 7, 0, time.UTC)
	for _, c := range []struct {
		every, start, want time.Duration // start and want after base
	}{
		{time.Second, 3 * time.Millisecond, time.Second},           // a beat's poll, 3 ms late
		{time.Second, 990 * time.Millisecond, 2 * time.Second},     // the first poll, at an odd moment
		{time.Second, 300 * time.Millisecond, time.Second},         // 700 ms later
		{5 * time.Second, 200 * time.Millisecond, 3 * time.Second}, // 23:00:10
		{MinInterval, 260 * time.Millisecond, 500 * time.Millisecond},
	} {
		p := NewPoller(Config{URL: "http://127.0.0.1:1", Interval: c.every})
		if got, want := p.next(base.Add(c.start)), base.Add(c.want); !got.Equal(want) {
			t.Errorf("every %v, poll at +%v: next at %s, want %s", c.every, c.start, got.Format("15:04:05.000"), want.Format("15:04:05.000"))
		}
	}
}
