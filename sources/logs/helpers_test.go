package logs

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// collector records what a source delivers, a batch of lines as its lines
// (sends counts the messages themselves).
type collector struct {
	mu    sync.Mutex
	msgs  []any
	sends int
}

func (c *collector) send(m any) {
	c.mu.Lock()
	c.sends++
	if b, ok := m.(model.LogLines); ok {
		for _, l := range b {
			c.msgs = append(c.msgs, l)
		}
	} else {
		c.msgs = append(c.msgs, m)
	}
	c.mu.Unlock()
}

// lines returns the delivered log lines' texts, in order.
func (c *collector) lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.msgs {
		if ll, ok := m.(model.LogLine); ok {
			out = append(out, ll.Text)
		}
	}
	return out
}

// plain returns delivered lines that are not llmtop's own notices.
func (c *collector) plain() []string {
	var out []string
	for _, l := range c.lines() {
		if !strings.HasPrefix(l, "llmtop: ") {
			out = append(out, l)
		}
	}
	return out
}

func (c *collector) events(kind string) []*model.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*model.Event
	for _, m := range c.msgs {
		if ll, ok := m.(model.LogLine); ok && ll.Event != nil && ll.Event.Kind == kind {
			out = append(out, ll.Event)
		}
	}
	return out
}

func (c *collector) samples() []model.Sample {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []model.Sample
	for _, m := range c.msgs {
		if s, ok := m.(model.Sample); ok {
			out = append(out, s)
		}
	}
	return out
}

// waitFor polls cond for up to 10 s (generous: the machine is shared).
// waitFor polls cond until it holds, for 30 s at most: room for a busy
// machine. The pause between polls grows from 5 ms to 100 ms, so that a
// costly cond (copying 100 000 lines) does not starve the follower it
// waits for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	pause := 5 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
}

func equalLines(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// unlimited lets every line through, for tests that count lines.
var unlimited = Options{MaxLinesPerSec: 1 << 30, QueueLines: 1 << 20}

// lineTime is stampTime's time.
func lineTime(line string, arrival time.Time, loc *time.Location) time.Time {
	t, _ := stampTime(line, arrival, loc)
	return t
}
