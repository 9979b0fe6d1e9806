package recording

import (
	"fmt"
	"sync"
	"time"
)

// Recorder records from any goroutine without ever blocking the caller:
// messages are stamped and queued, and one goroutine writes them and
// flushes the file once a second. When the disk falls behind by more than
// the queue holds, messages are dropped and a Note in the file says how
// many, so a replay never claims more than was recorded.
type Recorder struct {
	w    *Writer
	next func() (*Writer, error)
	max  int64
	// total counts records written into every file.
	total int64
	// full says the file reached max at the last flush: the next record
	// goes into a new file (made then, so a quit leaves no empty one).
	full bool
	now  func() time.Time
	ch   chan Record
	// tick, when set, writes a Tick record every flush: the clock of a face
	// that runs its rules once a second (the monitor).
	tick bool

	mu      sync.Mutex
	dropped int
	closed  bool
	done    chan struct{}
	stop    chan struct{}
	err     error
}

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	// Now stamps each message (default time.Now).
	Now func() time.Time
	// Every is how often the file is flushed (default 1 s).
	Every time.Duration
	// Ticks writes a Tick at every flush.
	Ticks bool
	// Queue bounds the messages waiting for the disk (default 4096: over
	// an hour of one endpoint's scrapes, a bounded amount of memory).
	Queue int
	// Next, with MaxBytes, rotates: once the file holds MaxBytes, it is
	// closed and the recording goes on in the Writer Next returns.
	Next     func() (*Writer, error)
	MaxBytes int64
}

// NewRecorder starts recording into w; Close stops it and closes w.
func NewRecorder(w *Writer, o RecorderOptions) *Recorder {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Every <= 0 {
		o.Every = time.Second
	}
	if o.Queue <= 0 {
		o.Queue = 4096
	}
	r := &Recorder{w: w, next: o.Next, max: o.MaxBytes, now: o.Now, ch: make(chan Record, o.Queue), tick: o.Ticks,
		done: make(chan struct{}), stop: make(chan struct{})}
	go r.run(o.Every)
	return r
}

// Record queues msg, stamped now.
func (r *Recorder) Record(msg any) { r.RecordAt(r.now(), msg) }

// RecordAt queues msg, stamped t. It never blocks.
func (r *Recorder) RecordAt(t time.Time, msg any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	select {
	case r.ch <- Record{Time: t, Msg: msg}:
	default:
		r.dropped++
	}
}

func (r *Recorder) run(every time.Duration) {
	defer close(r.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case rec := <-r.ch:
			r.write(rec)
		case <-t.C:
			r.drain()
			r.flush(true)
		case <-r.stop:
			r.drain()
			r.flush(false)
			return
		}
	}
}

// drain writes what is queued, so a tick follows the messages before it.
func (r *Recorder) drain() {
	for {
		select {
		case rec := <-r.ch:
			r.write(rec)
		default:
			return
		}
	}
}

func (r *Recorder) write(rec Record) {
	if r.full {
		r.full = false
		r.rotate()
	}
	if _, err := r.w.Write(rec.Time, rec.Msg); err != nil {
		r.fail(err)
	}
}

// flush writes the drop note and the tick, then pushes the file.
func (r *Recorder) flush(tick bool) {
	r.mu.Lock()
	n := r.dropped
	r.dropped = 0
	r.mu.Unlock()
	now := r.now()
	if n > 0 {
		r.write(Record{Time: now, Msg: Note{Text: fmt.Sprintf("%d messages not recorded: the disk fell behind", n)}})
	}
	if tick && r.tick {
		r.write(Record{Time: now, Msg: Tick{}})
	}
	if err := r.w.Flush(); err != nil {
		r.fail(err)
		return
	}
	if r.next != nil && r.max > 0 && r.w.Size() >= r.max {
		r.full = true
	}
}

// rotate closes the full file and goes on in the next; when the next
// cannot be made, the recording stops with that error.
func (r *Recorder) rotate() {
	nw, err := r.next()
	if err != nil {
		r.fail(fmt.Errorf("starting the next recording file: %w", err))
		return
	}
	old := r.w
	r.mu.Lock()
	r.total += old.Records()
	r.w = nw
	r.mu.Unlock()
	if err := old.Close(); err != nil {
		r.fail(err)
	}
}

// Records counts the records written, in every file.
func (r *Recorder) Records() int64 {
	r.mu.Lock()
	w := r.w
	r.mu.Unlock()
	return r.total + w.Records()
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// Err is the first error writing the file, nil when none.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close writes what is queued, ends the file and closes it.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.done
		return r.Err()
	}
	r.closed = true
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	r.mu.Lock()
	w := r.w
	r.mu.Unlock()
	err := w.Close()
	if e := r.Err(); e != nil {
		return e
	}
	return err
}
