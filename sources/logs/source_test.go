package logs

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// fakeClock is a settable Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

const statsLine = "INFO 08-14 12:00:01 [loggers.py:259] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%"

// In a flood, plain lines beyond the cap are dropped and counted, while
// matched lines and stats all get through, and the drop is reported.
func TestSourceFloodKeepsEventsAndStats(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 8, 14, 12, 0, 1, 0, time.UTC)}
	c := &collector{}
	src := NewSource(Options{MaxLinesPerSec: 100, Now: clock.Now, Location: time.UTC}, c.send)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Run(ctx)
	for i := 0; i < 10000; i++ {
		switch {
		case i%2000 == 1000:
			src.Line([]byte("RuntimeError: CUDA error: an illegal memory access was encountered"))
		case i%3000 == 1500:
			src.Line([]byte(statsLine))
		default:
			src.Line([]byte("INFO 08-14 12:00:01 [logger.py:40] Received request chatcmpl-123"))
		}
	}
	st := src.Stats()
	if st.Lines != 10000 || st.Dropped < 9800 || st.Matched != 5+3 {
		t.Errorf("stats %+v", st)
	}
	clock.Add(2 * time.Second)
	waitFor(t, "flood notice", func() bool { return len(c.events("log_flood")) == 1 })
	if n := len(c.events("cuda_illegal_access")); n != 5 {
		t.Errorf("%d of 5 error events delivered", n)
	}
	if n := len(c.samples()); n != 3 {
		t.Errorf("%d of 3 samples delivered", n)
	}
	for _, m := range c.msgs {
		if ll, ok := m.(model.LogLine); ok && ll.Text == statsLine && ll.Event != nil {
			t.Error("a periodic stats line must not raise an event")
		}
	}
	if n := len(c.plain()); n != 100+8 {
		t.Errorf("%d lines delivered, want the 100-line budget plus 8 matched", n)
	}
	if ev := c.events("log_flood")[0]; !strings.Contains(ev.Title, "lines not shown") {
		t.Errorf("flood notice %q", ev.Title)
	}
}

// One error repeated thousands of times a second does not flood the
// events pane: beyond 20 a second of one kind they are plain lines.
func TestSourceRepeatedEventIsCapped(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 8, 14, 12, 0, 1, 0, time.UTC)}
	c := &collector{}
	src := NewSource(Options{MaxLinesPerSec: 5, Now: clock.Now}, c.send)
	for i := 0; i < 1000; i++ {
		src.Line([]byte("Traceback (most recent call last):"))
	}
	if n := len(src.queue); n != 25 {
		t.Errorf("%d queued, want 20 events + 5 plain-budget lines", n)
	}
}

// A UI that stops reading never blocks the follower, and memory stays
// bounded by QueueLines.
func TestSourceNeverBlocksOnStalledUI(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	src := NewSource(Options{MaxLinesPerSec: 1 << 30, QueueLines: 1000}, func(any) { <-release })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Run(ctx)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 50000; i++ {
			src.Line([]byte("plain line"))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Line blocked on a stalled UI")
	}
	src.mu.Lock()
	n := len(src.queue)
	src.mu.Unlock()
	if n > 1000 {
		t.Errorf("queue grew to %d", n)
	}
	if st := src.Stats(); st.Dropped < 48000 {
		t.Errorf("dropped %d", st.Dropped)
	}
}

// The demo path: a vLLM log read from a stream becomes lines, events with
// their own timestamps, and a log-derived sample.
func TestFollowReaderVLLMLog(t *testing.T) {
	log := strings.Join([]string{
		"(EngineCore_DP0 pid=456) INFO 08-14 11:59:00 [kv_cache_utils.py:1087] GPU KV cache size: 470,080 tokens, Maximum concurrency for 32,768 tokens per request: 14.35x",
		"(APIServer pid=123) INFO:     Started server process [123]",
		"(APIServer pid=123) " + statsLine,
		"(EngineCore_DP0 pid=456) ERROR 08-14 12:00:05 [core.py:710] torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
	}, "\n") + "\n"
	c := &collector{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Date(2026, 8, 14, 12, 0, 30, 0, time.UTC)
	src := NewSource(Options{Endpoint: "http://127.0.0.1:8000", Now: func() time.Time { return now }, Location: time.UTC}, c.send)
	go src.Run(ctx)
	FollowReader(ctx, "simulator log", strings.NewReader(log), src)
	waitFor(t, "end notice", func() bool { return len(c.events("log_ended")) == 1 })
	if got := c.plain(); len(got) != 4 || got[1] != "(APIServer pid=123) INFO:     Started server process [123]" {
		t.Errorf("lines %q", got)
	}
	ev := c.events("cuda_illegal_access")
	if len(ev) != 1 || !ev[0].Time.Equal(time.Date(2026, 8, 14, 12, 0, 5, 0, time.UTC)) || ev[0].Endpoint != "http://127.0.0.1:8000" {
		t.Fatalf("event %+v", ev)
	}
	s := c.samples()
	if len(s) != 1 || s[0].Gauges[model.KVCapacityTokens] != 470080 || s[0].Endpoint != "http://127.0.0.1:8000" {
		t.Errorf("samples %+v", s)
	}
}

// Lines queued together travel as one model.LogLines, in order around the
// samples between them; a lone line stays a model.LogLine.
func TestDeliverBatchesConsecutiveLines(t *testing.T) {
	var got []any
	src := NewSource(Options{}, func(m any) { got = append(got, m) })
	line := func(s string) model.LogLine { return model.LogLine{Text: s} }
	sm := model.Sample{Endpoint: "e"}
	if !src.deliver(context.Background(), []any{line("a"), line("b"), line("c"), sm, line("d")}) {
		t.Fatal("deliver reported a done context")
	}
	if len(got) != 3 {
		t.Fatalf("%d messages, want 3: %#v", len(got), got)
	}
	if b, ok := got[0].(model.LogLines); !ok || len(b) != 3 || b[0].Text != "a" || b[2].Text != "c" {
		t.Errorf("first message %#v, want the 3 lines a b c", got[0])
	}
	if _, ok := got[1].(model.Sample); !ok {
		t.Errorf("second message %#v, want the sample", got[1])
	}
	if l, ok := got[2].(model.LogLine); !ok || l.Text != "d" {
		t.Errorf("third message %#v, want line d alone", got[2])
	}
}

// The rate window opens at the first line after a quiet spell: a burst
// after a minute of silence is read at its own rate, not spread over the
// minute (Run's window timer runs only while lines come).
func TestSourceRateAfterQuietSpell(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 8, 14, 12, 0, 1, 0, time.UTC)}
	src := NewSource(Options{MaxLinesPerSec: 1 << 20, Now: clock.Now}, func(any) {})
	clock.Add(time.Minute)
	for i := 0; i < 50; i++ {
		src.Line([]byte("INFO a plain line"))
	}
	clock.Add(time.Second)
	src.closeSecond()
	if r := src.Stats().LinesPerSec; r != 50 {
		t.Fatalf("50 lines in the second after a quiet minute read as %g lines/s", r)
	}
	clock.Add(time.Second)
	src.closeSecond()
	if r := src.Stats().LinesPerSec; r != 0 {
		t.Fatalf("a quiet second read as %g lines/s", r)
	}
}
