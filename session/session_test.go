package session

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

// A session drives its core from one goroutine: the sources' messages
// reach it, the clock runs and publishes, Do runs on it, the recording
// hears every message first, and Close waits for the sources that said
// when they stop, applies what they sent meanwhile and then hands the core
// to the caller. A Send after Close neither blocks nor panics.
func TestSessionDrivesTheCoreFromOneGoroutine(t *testing.T) {
	const url = "http://127.0.0.1:1"
	var recorded, published atomic.Int64
	var other atomic.Value
	stopped := make(chan struct{})
	src := Source{Name: "fake", Start: func(ctx context.Context, env *Env) error {
		env.Stopped = append(env.Stopped, stopped)
		go func() {
			defer close(stopped)
			for i := 0; ; i++ {
				env.Send(model.Scrape{Endpoint: url, Time: time.Now(), Err: "refused", ErrKind: model.ErrRefused})
				env.Send("status line")
				select {
				case <-ctx.Done():
					// the last words of a stopping source still arrive
					env.Send(model.Event{Endpoint: url, Time: time.Now(), Kind: "source_stopped", Severity: model.SevInfo, Title: "stopped"})
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		return nil
	}}
	s := New(Options{
		Core: core.Options{Endpoints: []string{url}}, Env: Env{URLs: []string{url}, Interval: 10 * time.Millisecond},
		Sources: []Source{src},
		Record:  func(any) { recorded.Add(1) },
		Publish: func(*core.Monitor) { published.Add(1) },
		Other:   func(m any) { other.Store(m) },
	})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for published.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	var seen bool
	if !s.Do(func(mon *core.Monitor) { seen = mon.Endpoint(url) != nil }) || !seen {
		t.Fatal("Do did not run on the driving goroutine, or the core never saw the endpoint")
	}
	if !s.Close(5 * time.Second) {
		t.Fatal("Close did not wait for the source that said when it stops")
	}
	if published.Load() < 3 {
		t.Errorf("the clock published %d times", published.Load())
	}
	if other.Load() != "status line" {
		t.Errorf("a message that is not an input did not reach Other: %v", other.Load())
	}
	var last bool
	for i := range s.Core().Events().Len() {
		last = last || s.Core().Events().Newest(i).Kind == "source_stopped"
	}
	if !last {
		t.Error("what the source sent while it stopped was not applied before Close returned")
	}
	if recorded.Load() == 0 {
		t.Error("nothing was teed into the recording")
	}
	done := make(chan struct{})
	go func() { s.Send(model.Scrape{Endpoint: url}); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Send after Close blocks")
	}
	if s.Do(func(*core.Monitor) {}) {
		t.Error("Do ran after Close: the caller owns the core now")
	}
	s.Close(time.Second) // once: a second Close is harmless
}

// A source's failure stops the start without StartErr and is reported by
// name with it; either way the later sources follow the rule.
func TestSessionStartErrors(t *testing.T) {
	bad := Source{Name: "bad", Start: func(context.Context, *Env) error { return errors.New("no") }}
	var later bool
	good := Source{Name: "good", Start: func(context.Context, *Env) error { later = true; return nil }}
	s := New(Options{Sources: []Source{bad, good}})
	if err := s.Start(context.Background()); err == nil || later {
		t.Fatalf("Start = %v, later source started %v; want the error and no later start", err, later)
	}
	s.Close(time.Second)
	var named string
	s = New(Options{Sources: []Source{bad, good}, StartErr: func(n string, _ error) { named = n }})
	if err := s.Start(context.Background()); err != nil || !later || named != "bad" {
		t.Fatalf("Start = %v, later %v, named %q; want nil, true, bad", err, later, named)
	}
	s.Close(time.Second)
}

// With a host (the monitor's Bubble Tea loop), Send hands the host every
// message after the recording has it, and the session runs no loop.
func TestSessionHostDrives(t *testing.T) {
	var order []string
	s := New(Options{Record: func(any) { order = append(order, "record") }, Host: func(any) { order = append(order, "host") }})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Send(model.Scrape{})
	if s.Do(func(*core.Monitor) {}) {
		t.Error("Do ran with a host driving the core")
	}
	s.Close(time.Second)
	if len(order) != 2 || order[0] != "record" || order[1] != "host" {
		t.Errorf("order = %v, want record then host", order)
	}
}
