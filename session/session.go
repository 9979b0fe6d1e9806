// Package session is the runtime every face of llmtop runs on. A Session
// builds the one core.Monitor, starts the sources, drives the core from one
// goroutine, tees every input into the recording, runs the clock, publishes
// a read-only copy for readers on other goroutines, and cleans up once.
//
// The faces are thin over it: `diagnose` and `export` let the session drive
// the core on its own goroutine (Start, Do, Close); the monitor hands its
// messages to Bubble Tea's loop instead (Options.Host), whose Update is then
// the one goroutine that drives the core; `replay`, `diagnose --from` and
// `snapshot --from` feed a recording's records through Feed, on the
// caller's goroutine.
//
// It imports the core and model, never tui or a source: the composition
// root (cmd/llmtop) hands it the sources to start.
package session

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

// Env is what a source gets to start with.
type Env struct {
	// URLs are the endpoints being watched (after discovery).
	URLs []string
	// Interval is the initial refresh interval; Window the initial window.
	Interval, Window time.Duration
	// Send delivers a message to the core (and the recording). Safe from
	// any goroutine; it never blocks once the session is closed.
	Send func(msg any)
	// OnInterval collects the setters of sources that follow the refresh
	// interval (+/- on the screen); a source appends its setter in Start.
	OnInterval []func(time.Duration)
	// OnWindow collects the setters of sources that evaluate the window
	// themselves (Prometheus), called when the window changes ([/]).
	OnWindow []func(time.Duration)
	// Stopped collects channels a source's Start returns that close once
	// its work has stopped after ctx ended (a log command's process group
	// gone); Close waits for them.
	Stopped []<-chan struct{}

	// Logs are engine logs the face attaches besides --log (the engine
	// `llmtop run` and `tune` started writes its own).
	Logs []string

	// Demo mode (llmtop demo): the simulator's log stream and a probe of its
	// load for the simulated GPUs. Nil outside the demo.
	SimLog io.Reader
	SimGPU func() SimGPULoad
}

// SimGPULoad is the simulator's load as the simulated GPUs follow it.
type SimGPULoad struct {
	Util       float64 // 0–1 share of time the GPU is busy
	MemUsed    float64 // bytes held by the engine
	MemTotal   float64 // bytes on the device
	BatchShare float64 // 0–1 how full the running batch is (drives power)
}

// Source is one kind of source, as the composition root registers it.
type Source struct {
	Name string
	// Start starts the source's goroutines and returns quickly; they stop
	// when ctx is cancelled.
	Start func(ctx context.Context, env *Env) error
}

// Options build a Session.
type Options struct {
	// Core builds the one core (its Endpoints are the IDs the sources tag
	// their messages with).
	Core core.Options
	// Monitor, when set, is the core to drive instead of building one from
	// Core (a watch's, or a replay's checkpoint).
	Monitor *core.Monitor
	// LogsOn: a log is attached, so the log rules judge from the start
	// instead of saying "no log" until its first line.
	LogsOn bool
	// Env is the sources' environment (its Send, setters and Stopped are
	// the session's).
	Env Env
	// Sources are started in order by Start.
	Sources []Source
	// Record tees every message into the recording before the core gets
	// it (nil records nothing).
	Record func(msg any)
	// Clock runs on the driving goroutine every Env.Interval (nil: the
	// core's Tick, which runs the rules when data changed).
	Clock func(mon *core.Monitor, now time.Time)
	// Publish runs on the driving goroutine after each Clock: it copies
	// what readers on other goroutines need out of the core (never the
	// core itself).
	Publish func(mon *core.Monitor)
	// Other takes, on the driving goroutine, a message that is not a
	// model.Input (a source's status line).
	Other func(msg any)
	// StartErr hears a source whose Start failed (nil: Start returns the
	// first such error and starts no more).
	StartErr func(name string, err error)
	// Host, when set, is the face's own loop (the monitor's Bubble Tea
	// program): Send hands it every message and the session runs no loop
	// or clock of its own; the host applies the inputs to Core() on its
	// one goroutine.
	Host func(msg any)
}

// Session is one face's runtime. Its core is driven by one goroutine: the
// session's own loop between Start and Close, the host's with
// Options.Host, the caller's after Close (and for Feed).
type Session struct {
	o    Options
	mon  *core.Monitor
	env  *Env
	msgs chan any
	do   chan func()

	// the sources' context ends first, then the loop's: a source still
	// sending while it stops is drained, not blocked
	srcCtx, loopCtx       context.Context
	stopSrc, stopLoop     context.CancelFunc
	mu                    sync.Mutex // the setter lists, while sources start
	begun                 atomic.Bool
	started, driven, done chan struct{}
	closeOnce             sync.Once
}

// New builds the core and the session around it; nothing runs until Start.
func New(o Options) *Session {
	mon := o.Monitor
	if mon == nil {
		mon = core.New(o.Core)
	}
	s := &Session{o: o, mon: mon, msgs: make(chan any, 1024), do: make(chan func()),
		started: make(chan struct{}), driven: make(chan struct{}), done: make(chan struct{})}
	s.srcCtx, s.stopSrc = context.WithCancel(context.Background())
	s.loopCtx, s.stopLoop = context.WithCancel(context.Background())
	if o.LogsOn {
		s.mon.SetLogsOn()
	}
	env := o.Env
	env.OnInterval, env.OnWindow, env.Stopped = nil, nil, nil
	env.Send = s.Send
	s.env = &env
	return s
}

// Core is the session's core, for the goroutine that drives it: the host's
// (Options.Host), or the caller's before Start, after Close and with Feed.
func (s *Session) Core() *core.Monitor { return s.mon }

// Start runs the driving loop (unless a host drives) and then starts every
// source, in order. It returns once they have started; they stop when ctx
// ends or at Close. A source's failure goes to StartErr, or is returned
// (and no later source starts) when there is none. Only the first Start
// runs, and none after Close.
func (s *Session) Start(ctx context.Context) error {
	if !s.begun.CompareAndSwap(false, true) {
		return nil
	}
	context.AfterFunc(ctx, s.stopSrc)
	if s.o.Host == nil {
		// The loop runs before the sources start: a Start that sends
		// while it starts must not fill the queue with nobody reading.
		go s.loop()
	} else {
		close(s.driven)
	}
	defer close(s.started)
	for _, src := range s.o.Sources {
		if src.Start == nil {
			continue
		}
		s.mu.Lock()
		err := src.Start(s.srcCtx, s.env)
		s.mu.Unlock()
		if err == nil {
			continue
		}
		if s.o.StartErr == nil {
			return err
		}
		s.o.StartErr(src.Name, err)
	}
	return nil
}

// Send tees msg into the recording and hands it to the core's goroutine.
// Safe from any goroutine; after Close it is dropped.
func (s *Session) Send(msg any) {
	if s.o.Record != nil {
		s.o.Record(msg)
	}
	if s.o.Host != nil {
		s.o.Host(msg)
		return
	}
	select {
	case s.msgs <- msg:
	case <-s.done:
	}
}

// Do runs f on the goroutine that drives the core and waits for it (from
// Start on); false when the session's loop does not run it (after Close,
// or a host drives: then the caller's goroutine is the one to use).
func (s *Session) Do(f func(mon *core.Monitor)) bool {
	if s.o.Host != nil {
		return false
	}
	ran := make(chan struct{})
	select {
	case s.do <- func() { f(s.mon); close(ran) }:
		<-ran
		return true
	case <-s.done:
		return false
	}
}

// SetInterval hands a new refresh interval to every source that follows
// it, once they have started (never before: a Start appends its setter).
func (s *Session) SetInterval(d time.Duration) { s.broadcast(&s.env.OnInterval, d) }

// SetWindow hands a new window to the sources that evaluate it.
func (s *Session) SetWindow(d time.Duration) { s.broadcast(&s.env.OnWindow, d) }

func (s *Session) broadcast(fs *[]func(time.Duration), d time.Duration) {
	select {
	case <-s.started:
	case <-s.srcCtx.Done():
		return
	}
	if s.srcCtx.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range *fs {
		f(d)
	}
}

// loop drives the core: the sources' messages, the face's calls (Do), and
// every interval the clock and the published copy.
func (s *Session) loop() {
	defer close(s.driven)
	interval := s.o.Env.Interval
	if interval <= 0 {
		interval = time.Second
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-s.loopCtx.Done():
			s.drain()
			return
		case msg := <-s.msgs:
			s.apply(msg)
		case f := <-s.do:
			f()
		case now := <-tick.C:
			s.Clock(now)
		}
	}
}

// drain applies what the sources sent before they stopped.
func (s *Session) drain() {
	for {
		select {
		case msg := <-s.msgs:
			s.apply(msg)
		default:
			return
		}
	}
}

func (s *Session) apply(msg any) {
	if in, ok := msg.(model.Input); ok {
		s.mon.Apply(in)
	} else if s.o.Other != nil {
		s.o.Other(msg)
	}
}

// Clock runs the face's clock at now (and publishes): the loop calls it
// every interval; a face that owns the core (after Close) may call it for
// the last time.
func (s *Session) Clock(now time.Time) {
	if s.o.Clock != nil {
		s.o.Clock(s.mon, now)
	} else {
		s.mon.Tick(now)
	}
	if s.o.Publish != nil {
		s.o.Publish(s.mon)
	}
}

// Close cleans up once: the sources stop (their context ends), Close waits
// up to wait for those that said when they are gone (Env.Stopped: log
// commands' processes), applies what they sent meanwhile, and ends the
// loop. After it, the caller's goroutine owns the core. It reports whether
// every source was gone in time.
func (s *Session) Close(wait time.Duration) bool {
	all := true
	deadline := time.Now().Add(wait)
	s.closeOnce.Do(func() {
		s.stopSrc()
		if s.begun.CompareAndSwap(false, true) { // never started: none will
			close(s.started)
			close(s.driven)
		}
		select {
		case <-s.started: // every Start has returned: Stopped is complete
			all = waitClosed(s.env.Stopped, deadline)
		case <-time.After(time.Until(deadline)):
			all = false
		}
		s.stopLoop()
		<-s.driven
		close(s.done)
	})
	return all
}

// waitClosed waits until every channel is closed or until deadline, and
// reports whether they all closed.
func waitClosed(chans []<-chan struct{}, deadline time.Time) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for _, c := range chans {
		select {
		case <-c:
		case <-timer.C:
			return false
		}
	}
	return true
}
