package gpu

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmtop/llmtop/beat"
	"github.com/llmtop/llmtop/model"
)

// Refresh interval bounds: NVML calls are cheap but not free (PCIe
// throughput alone samples for 20 ms per counter), so the interval is
// clamped.
const (
	DefaultInterval = time.Second
	MinInterval     = 250 * time.Millisecond
)

// ClampInterval applies the default (for 0) and the minimum.
func ClampInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultInterval
	}
	return max(d, MinInterval)
}

// Config is what every GPU source takes.
type Config struct {
	Interval time.Duration // default 1 s, clamped ≥ 250 ms
	Filter   Filter        // --gpus and CUDA_VISIBLE_DEVICES
	Proc     fs.FS         // /proc for the process table; nil = the real one
	Timeout  time.Duration // DCGM: per scrape, default 2 s
	Now      func() time.Time
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c Config) proc() fs.FS {
	if c.Proc != nil {
		return c.Proc
	}
	return ProcFS()
}

// refresher reads every visible device once. It is only ever called from
// one goroutine at a time.
type refresher interface {
	refresh(now time.Time) (model.GPUSnapshot, []model.Event)
	close()
}

// Source polls one refresher at an interval and delivers its snapshots.
type Source struct {
	r        refresher
	cfg      Config
	interval atomic.Int64
	wake     chan struct{}
	closer   sync.Once
	cleanMu  sync.Mutex
	cleaner  model.GPUCleaner // what the last refresh cleaned is not cleaned again
}

func newSource(cfg Config, r refresher) *Source {
	s := &Source{r: r, cfg: cfg, wake: make(chan struct{}, 1)}
	s.interval.Store(int64(ClampInterval(cfg.Interval)))
	return s
}

// SetInterval changes the refresh interval (clamped); safe from any goroutine.
func (s *Source) SetInterval(d time.Duration) {
	s.interval.Store(int64(ClampInterval(d)))
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Interval is the current refresh interval.
func (s *Source) Interval() time.Duration { return time.Duration(s.interval.Load()) }

// Refresh reads all devices once (for `llmtop snapshot`). Events (a GPU
// lost, an XID) come back beside the snapshot. It never panics: a failure
// inside a driver binding becomes the snapshot's Err.
func (s *Source) Refresh() (snap model.GPUSnapshot, events []model.Event) {
	now := s.cfg.now()
	defer func() {
		if p := recover(); p != nil {
			snap = model.GPUSnapshot{Time: now, Err: fmt.Sprintf("reading GPUs failed: %v", p)}
			events = nil
		}
	}()
	snap, events = s.r.refresh(now)
	snap.Time = now
	// Device names, process command lines and DCGM labels are outside
	// text: cleaned here, where they enter llmtop.
	snap = s.clean(snap)
	for i := range events {
		events[i] = model.CleanEvent(events[i])
	}
	return snap, events
}

// clean cleans a snapshot as model.CleanGPUs does, reusing what the last
// one held.
func (s *Source) clean(snap model.GPUSnapshot) model.GPUSnapshot {
	s.cleanMu.Lock()
	defer s.cleanMu.Unlock()
	return s.cleaner.Clean(snap)
}

// Run refreshes at once and then every interval (on the beat grid) until ctx is done,
// delivering each model.GPUSnapshot and then its model.Events. It closes the
// source when it returns.
func (s *Source) Run(ctx context.Context, deliver func(msg any)) {
	defer s.Close()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
			t.Reset(s.untilNext())
			continue
		case <-t.C:
		}
		snap, events := s.Refresh()
		if ctx.Err() != nil {
			return
		}
		deliver(snap)
		for _, ev := range events {
			deliver(ev)
		}
		t.Reset(s.untilNext())
	}
}

// untilNext is how long until the next refresh: the beat an interval away
// (the first at least half an interval away) on the beat grid (package
// beat), where the endpoints' scrapes are due too, so that the GPUs and the
// scrapes are read in one wake-up.
func (s *Source) untilNext() time.Duration {
	every := s.Interval()
	return time.Until(beat.After(time.Now(), every/2, every))
}

// Close releases the driver (NVML Shutdown); Run calls it on exit.
func (s *Source) Close() { s.closer.Do(s.r.close) }

// gpuEvent builds an event from the GPU source.
func gpuEvent(now time.Time, kind string, sev model.Severity, cat, title string, fields map[string]string) model.Event {
	return model.Event{Time: now, Source: "gpu", Kind: kind, Severity: sev, Category: cat, Title: title, Fields: fields}
}

// Event kinds raised by the GPU sources.
const (
	KindGPULost      = "gpu_lost"
	KindGPURecovered = "gpu_recovered"
	KindGPUXid       = model.KindGPUXid
)

// joinNotes joins the non-empty notes for the pane's one Note line.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}
