package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/llmtop/llmtop/checkpoint"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
)

// A replay's index: one pass over the recording, in the background, feeds
// a core as the monitor took the records and, every segRecords records,
// keeps a checkpoint of the core's state and the segment's records in a
// temporary file (unlinked: it goes when the replay ends; on disk, not in
// a tmpfs: see indexTemp). A seek decodes the nearest checkpoint at or
// before its target and feeds the records from there, so it costs at
// most one segment whatever the recording's length, and the replay holds
// one segment, not the recording. The records are kept as the reader
// handed them out, in the checkpoint package's encoding, each behind its
// length: reading them back costs about a tenth of decoding their JSON
// again, which was half of a seek. Checkpoints and segments are zstd
// frames: against flate (BestSpeed) they are smaller (the day's index:
// 365 MB → 224 MB) and a checkpoint inflates in a quarter of the time (a
// 2.6 MB core: 21 ms → 5 ms), which was a fifth of a seek.
//
// Tried and left out: a checkpoint every 250 records with every fourth a
// keyframe and the three after it compressed against it as their zstd
// dictionary. The index stayed as small (212 MB) and a seek took 28 ms of
// CPU instead of 37 (worst 43 against 66), but the second zstd encoder's
// and the dictionary decoder's tables took the replay's RSS while it
// indexed from about 104 MB to 160 MB, past issue 33's 150 MB; under a
// soft memory limit the collector ran so often that the pass did not
// finish in 8 minutes.

// segRecords is how many records a segment holds: a seek feeds at most
// this many into the checkpoint's core. Feeding is most of a seek once
// the checkpoint is decoded (a monitor's record costs about 0.05 ms, a
// second's tick running the rules): 500 keeps the worst seek of a day
// near 50 ms of CPU; 1 000 took 85 ms. Each checkpoint of a day's core
// is about 0.2 MB of the index's file.
const segRecords = 500

type segment struct {
	start    time.Time // its first record's time
	cp, recs [2]int64  // offset and length in the index's file
	// scenario is the demo's badge as it stood before the first record.
	scenario *recording.Scenario
}

type replayIndex struct {
	path string
	open func() (*recording.Reader, error)
	// every is how many records a segment holds (segRecords).
	every int
	h     recording.Header
	codec *checkpoint.Codec
	file  *os.File
	// zd reads checkpoints and segments back (DecodeAll is safe for
	// concurrent use).
	zd *zstd.Decoder

	// restore holds what a seek decodes a checkpoint with, kept from one
	// seek to the next: the frame and the checkpoint's bytes (a few MB;
	// read growing a new buffer each seek, they were a third of what a
	// seek allocated)
	restore struct {
		sync.Mutex
		z, raw []byte
	}

	mu    sync.Mutex
	grew  *sync.Cond
	segs  []segment
	last  time.Time // the newest record indexed
	done  bool
	err   error
	notes []string
	// marks are the moments a finding opened or an engine run started.
	marks []time.Time
}

// newReplayIndex starts indexing the recording that open reads (path
// names it, h is its header) in a temporary file, a checkpoint every
// `every` records (0: segRecords); stop ends the pass early.
func newReplayIndex(path string, h recording.Header, open func() (*recording.Reader, error), every int, stop <-chan struct{}) (*replayIndex, error) {
	f, err := indexTemp()
	if err != nil {
		return nil, fmt.Errorf("replay: a temporary file for the recording's index: %w", err)
	}
	zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		f.Close()
		return nil, err
	}
	x := &replayIndex{path: path, open: open, every: every, h: h, codec: checkpoint.New(), file: f, zd: zd}
	if x.every <= 0 {
		x.every = segRecords
	}
	x.grew = sync.NewCond(&x.mu)
	go x.build(stop)
	return x, nil
}

// Close ends the index's file (the pass, when still running, fails on it).
func (x *replayIndex) Close() error { return x.file.Close() }

func (x *replayIndex) build(stop <-chan struct{}) {
	err := x.pass(stop)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.done, x.err = true, err
	x.grew.Broadcast()
}

func (x *replayIndex) pass(stop <-chan struct{}) error {
	r, err := x.open()
	if err != nil {
		return err
	}
	defer r.Close()
	defer func() {
		x.mu.Lock()
		x.notes = r.Notes()
		x.mu.Unlock()
	}()
	// the fastest level: the pass compresses a checkpoint every segment
	// (the better levels took twice its time for a tenth less)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	defer enc.Close()
	mon := session.ReplayCore(x.h)
	var (
		off          int64
		seg          segment
		open         bool
		n            int
		scenario     *recording.Scenario
		cp, rb, recs []byte
		buf          []byte
	)
	write := func(b []byte) ([2]int64, error) {
		buf = enc.EncodeAll(b, buf[:0])
		if _, err := x.file.WriteAt(buf, off); err != nil {
			return [2]int64{}, fmt.Errorf("replay: writing the recording's index: %w", err)
		}
		s := [2]int64{off, int64(len(buf))}
		off += int64(len(buf))
		return s, nil
	}
	closeSeg := func(last time.Time) error {
		if !open {
			return nil
		}
		var err error
		if seg.recs, err = write(recs); err != nil {
			return err
		}
		x.mu.Lock()
		x.segs = append(x.segs, seg)
		x.last = last
		x.grew.Broadcast()
		x.mu.Unlock()
		return nil
	}
	openSeg := func(start time.Time) error {
		var err error
		if cp, err = x.codec.Encode(cp[:0], mon); err != nil {
			return err
		}
		seg = segment{start: start, scenario: scenario}
		if seg.cp, err = write(cp); err != nil {
			return err
		}
		recs, open = recs[:0], true
		return nil
	}
	var last time.Time
	for {
		select {
		case <-stop:
			return errors.New("replay: stopped")
		default:
		}
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if n >= x.every || !open {
			if err := closeSeg(last); err != nil {
				return err
			}
			if err := openSeg(rec.Time); err != nil {
				return err
			}
			n = 0
		}
		// the record as the reader made it (stamped, cleaned, cut), in
		// the checkpoint's encoding behind its length: reading it back
		// costs a tenth of decoding its JSON line again
		if rb, err = x.codec.Encode(rb[:0], &rec); err != nil {
			return err
		}
		recs = append(binary.AppendUvarint(recs, uint64(len(rb))), rb...)
		n++
		session.Feed(mon, rec)
		if sc, ok := rec.Msg.(recording.Scenario); ok {
			scenario = &sc
		}
		last = rec.Time
	}
	if err := closeSeg(last); err != nil {
		return err
	}
	marks := marksOf(mon)
	x.mu.Lock()
	x.marks = marks
	x.mu.Unlock()
	return nil
}

// marksOf lists the moments a finding opened or an engine run started.
func marksOf(mon *core.Monitor) []time.Time {
	seen := map[time.Time]bool{}
	for _, f := range mon.History() {
		seen[f.Opened] = true
	}
	for _, f := range mon.Report().Findings {
		seen[f.Opened] = true
	}
	for _, u := range mon.URLs() {
		for i, run := range mon.RunsOf(u) {
			if i > 0 {
				seen[run.Started] = true
			}
		}
	}
	var out []time.Time
	for t := range seen {
		if !t.IsZero() {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// state says how far the pass has come: the newest record indexed,
// whether it is done (and the error that ended it), the marks once done.
func (x *replayIndex) state() (last time.Time, done bool, err error, marks []time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.last, x.done, x.err, x.marks
}

// waitFor blocks until the index covers t (a written segment ends after
// t, or the pass ended) and returns the segment to start from: the last one
// starting at or before t.
func (x *replayIndex) waitFor(t time.Time, stop <-chan struct{}) (segment, int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for !x.done && (len(x.segs) == 0 || !x.last.After(t)) {
		select {
		case <-stop:
			return segment{}, 0, errors.New("replay: stopped")
		default:
		}
		x.grew.Wait()
	}
	if len(x.segs) == 0 {
		if x.err != nil {
			return segment{}, 0, x.err
		}
		return segment{}, 0, fmt.Errorf("%s holds no records", x.path)
	}
	i := sort.Search(len(x.segs), func(i int) bool { return x.segs[i].start.After(t) }) - 1
	return x.segs[max(i, 0)], max(i, 0), nil
}

// segmentAt returns the i-th segment, waiting for the pass to write it;
// false when the recording has no more.
func (x *replayIndex) segmentAt(i int, stop <-chan struct{}) (segment, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for !x.done && i >= len(x.segs) {
		select {
		case <-stop:
			return segment{}, false
		default:
		}
		x.grew.Wait()
	}
	if i >= len(x.segs) {
		return segment{}, false
	}
	return x.segs[i], true
}

// checkpoint is the core as it stood before seg's first record.
func (x *replayIndex) checkpoint(seg segment) (*core.Monitor, error) {
	rs := &x.restore
	rs.Lock()
	defer rs.Unlock()
	var err error
	if rs.z, err = x.read(seg.cp, rs.z); err != nil {
		return nil, err
	}
	if rs.raw, err = x.zd.DecodeAll(rs.z, rs.raw[:0]); err != nil {
		return nil, fmt.Errorf("replay: reading a checkpoint: %w", err)
	}
	// the core copies what it keeps out of raw: the next seek reuses it
	return checkpoint.Decode[*core.Monitor](x.codec, rs.raw)
}

// read reads the frame at at (offset, length) of the index's file into buf.
func (x *replayIndex) read(at [2]int64, buf []byte) ([]byte, error) {
	buf = append(buf[:0], make([]byte, at[1])...)
	if _, err := x.file.ReadAt(buf, at[0]); err != nil {
		return buf, fmt.Errorf("replay: reading the recording's index: %w", err)
	}
	return buf, nil
}

// records reads seg's records.
func (x *replayIndex) records(seg segment) *segReader {
	z, err := x.read(seg.recs, nil)
	if err == nil {
		z, err = x.zd.DecodeAll(z, nil)
	}
	return &segReader{codec: x.codec, b: z, err: err}
}

// segReader reads a segment's records back, one at a time.
type segReader struct {
	codec *checkpoint.Codec
	b     []byte
	err   error
}

// Next is the segment's next record; io.EOF after its last.
func (s *segReader) Next() (recording.Record, error) {
	if s.err != nil {
		return recording.Record{}, s.err
	}
	if len(s.b) == 0 {
		return recording.Record{}, io.EOF
	}
	size, n := binary.Uvarint(s.b)
	if n <= 0 || size > uint64(len(s.b)-n) {
		s.err = errors.New("replay: the recording's index is cut short")
		return recording.Record{}, s.err
	}
	b := s.b[n : n+int(size)]
	s.b = s.b[n+int(size):]
	rec, err := checkpoint.Decode[*recording.Record](s.codec, b)
	if err != nil {
		return recording.Record{}, err
	}
	return *rec, nil
}

// waitDone blocks until the pass ends (or stop).
func (x *replayIndex) waitDone(stop <-chan struct{}) (time.Time, bool, error, []time.Time) {
	x.mu.Lock()
	for !x.done {
		select {
		case <-stop:
			x.mu.Unlock()
			return x.state()
		default:
		}
		x.grew.Wait()
	}
	x.mu.Unlock()
	return x.state()
}

// notesNow is what the pass's reader noted (once it is done).
func (x *replayIndex) notesNow() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string(nil), x.notes...)
}

// cursor reads the records from segment i (seg) on, segment after segment.
type cursor struct {
	x    *replayIndex
	i    int
	r    *segReader
	next *recording.Record
	stop <-chan struct{}
	end  bool
}

func (x *replayIndex) cursor(i int, seg segment, stop <-chan struct{}) *cursor {
	return &cursor{x: x, i: i, r: x.records(seg), stop: stop}
}

// peek is the next record, false after the last.
func (c *cursor) peek() (recording.Record, bool) {
	for c.next == nil && !c.end {
		rec, err := c.r.Next()
		if err == nil {
			c.next = &rec
			break
		}
		seg, ok := c.x.segmentAt(c.i+1, c.stop)
		if !ok {
			c.end = true
			break
		}
		c.i, c.r = c.i+1, c.x.records(seg)
	}
	if c.next == nil {
		return recording.Record{}, false
	}
	return *c.next, true
}

// pop consumes the record peek returned.
func (c *cursor) pop() { c.next = nil }
