package recording

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Checkpoints in a recording (issue 33): every so often of recorded time
// the Writer writes the state of the core the recording replays into, as
// the records before it left it. A face that needs only the recording's
// end (`diagnose --from`) starts from the last checkpoint and feeds the
// records after it, instead of replaying the whole file.
//
// The Writer makes them itself: it reads every line it writes back through
// a Reader's own decoding (so the records are exactly those a replay will
// read, times moved back and texts cut included) into a Shadow, the
// composition root's core, and asks it for its state. A checkpoint's state
// is for the llmtop build that wrote it (Checkpoints.Build): another build
// replays the file from its start.

// Checkpoints is the header's word that the file holds checkpoints.
type Checkpoints struct {
	// Build identifies the llmtop build whose core the states are of.
	Build string `json:"build"`
	// Every is the recorded time between two checkpoints.
	Every Duration `json:"every"`
}

// Shadow is the core a Writer feeds what it writes, to checkpoint it.
type Shadow interface {
	// Feed applies a record as the recording's replay will.
	Feed(Record)
	// State is the core's state as bytes (an error: no checkpoint now).
	State() ([]byte, error)
}

// checkpointLine is a checkpoint's "m".
type checkpointLine struct {
	Build string    `json:"build"`
	State []byte    `json:"state"`
	Read  readState `json:"read"`
}

// readState is where a Reader stood after the records before a
// checkpoint, so a Reader of the records after it goes on as one reading
// the whole file would.
type readState struct {
	N       int           `json:"n"`
	Last    int64         `json:"last"`
	Sec     int64         `json:"sec"`
	InSec   int           `json:"in_sec"`
	Back    int           `json:"back,omitempty"`
	Worst   time.Duration `json:"worst,omitempty"`
	Bad     int           `json:"bad,omitempty"`
	CutLog  int           `json:"cut_log,omitempty"`
	CutNote int           `json:"cut_note,omitempty"`
}

func (r *Reader) state() readState {
	return readState{N: r.n, Last: unixNano(r.last), Sec: unixNano(r.sec), InSec: r.inSec, Back: r.back, Worst: r.worst,
		Bad: r.bad, CutLog: r.cutLog, CutNote: r.cutNote}
}

func (r *Reader) restore(s readState) {
	r.n, r.last, r.sec, r.inSec = s.N, fromUnixNano(s.Last), fromUnixNano(s.Sec), s.InSec
	r.back, r.worst, r.bad, r.cutLog, r.cutNote = s.Back, s.Worst, s.Bad, s.CutLog, s.CutNote
}

// shadowing is a Writer's checkpointing state.
type shadowing struct {
	s     Shadow
	build string
	every time.Duration
	// r reads back each line written (its decoding and stamping only).
	r    *Reader
	next time.Time // when the next checkpoint is due
	err  error
}

// SetShadow makes w checkpoint the Shadow that mk makes (from the header
// as a Reader reads it back) every h.Checkpoints.Every of recorded time,
// feeding it every record w writes; w's header must name its Checkpoints
// and nothing may have been written yet. A state that fails, or is too
// large for a line, is not written: the next one is tried at its time.
func (w *Writer) SetShadow(mk func(Header) Shadow) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.header.Checkpoints
	if c == nil || c.Build == "" || c.Every <= 0 || w.n > 0 {
		return errors.New("recording: a shadow needs the header's checkpoints (build and every) and a file with no records yet")
	}
	h, err := w.readBack()
	if err != nil {
		return err
	}
	w.shadow = &shadowing{s: mk(h), build: c.Build, every: time.Duration(c.Every),
		r: &Reader{name: "the recording being written", unknown: map[string]int{}}}
	return nil
}

// readBack is w's header as a Reader reads it from the file (redacted,
// its texts cleaned, its interval and window bounded).
func (w *Writer) readBack() (Header, error) {
	b, err := w.lineOf(w.header)
	if err != nil {
		return Header{}, err
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	r, err := NewReader(&z, "")
	if err != nil {
		return Header{}, err
	}
	return r.Header(), nil
}

// shadowLine feeds the line just written to the shadow and writes a
// checkpoint when one is due. w.mu is held.
func (w *Writer) shadowLine(b []byte) {
	sh := w.shadow
	rec, ok, err := sh.r.take(bytes.TrimSuffix(b, []byte{'\n'}))
	if err != nil { // past the reader's limits: a replay stops here too
		w.shadow = nil
		return
	}
	if !ok {
		return
	}
	sh.s.Feed(rec)
	if sh.next.IsZero() {
		sh.next = rec.Time.Add(sh.every)
		return
	}
	if rec.Time.Before(sh.next) {
		return
	}
	sh.next = rec.Time.Add(sh.every)
	state, err := sh.s.State()
	if err != nil {
		sh.err = err
		return
	}
	cp, err := json.Marshal(checkpointLine{Build: sh.build, State: state, Read: sh.r.state()})
	if err != nil || len(cp) > maxLine-1024 {
		return
	}
	// A checkpoint starts a gzip member of its own, marked in its header,
	// so Resume finds the last one from the file's end without
	// decompressing what comes before it (any gzip reader reads the
	// members as one stream).
	if err := w.zw.Close(); err != nil {
		w.err = fmt.Errorf("writing the recording: %w", err)
		return
	}
	w.zw.Reset(w.buf)
	w.zw.Comment = memberMark
	w.writeValue(line{T: unixNano(rec.Time), K: kindCheckpoint, M: cp})
}

// memberMark is the comment in the gzip header of a member that starts
// with a checkpoint.
const memberMark = "llmtop-checkpoint"

// markedMembers returns the offsets of the gzip members whose header
// carries memberMark, newest first.
func markedMembers(f io.ReaderAt, size int64) []int64 {
	// the header: ID1 ID2 CM FLG(FCOMMENT) MTIME(4) XFL OS, the comment
	pat := []byte(memberMark + "\x00")
	const block = 1 << 20
	var out []int64
	end := size
	for end > 0 {
		start := max(0, end-block)
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return out
		}
		for i := len(buf); ; {
			j := bytes.LastIndex(buf[:i], pat)
			if j < 0 {
				break
			}
			if h := j - 10; h >= 0 && buf[h] == 0x1f && buf[h+1] == 0x8b && buf[h+2] == 8 && buf[h+3] == 0x10 {
				out = append(out, start+int64(h))
			}
			i = j
		}
		if start == 0 {
			break
		}
		end = start + int64(len(pat)) + 10 // a mark across two blocks
	}
	return out
}

// fromMember reads the member at off of the file f: its first line must
// be build's checkpoint; the Reader reads the records after it.
func fromMember(r *Reader, f *os.File, off, size int64, build string) (*Reader, *Resumed, bool) {
	zr, err := gzip.NewReader(io.NewSectionReader(f, off, size-off))
	if err != nil {
		return nil, nil, false
	}
	in := bufio.NewReaderSize(zr, 256<<10)
	tr := &Reader{name: r.name, header: r.header, in: in, unknown: map[string]int{}, notes: r.notes, closer: f}
	b, err := tr.readLine()
	if err != nil {
		return nil, nil, false
	}
	var l line
	var m checkpointLine
	if json.Unmarshal(b, &l) != nil || l.K != kindCheckpoint || json.Unmarshal(l.M, &m) != nil || m.Build != build {
		return nil, nil, false
	}
	tr.restore(m.Read)
	tr.off = 0 // offsets count from the member (a limit's error names it)
	return tr, &Resumed{State: m.State, Records: tr.n, Last: tr.last}, true
}

// maxTail bounds the records Resume keeps after the last checkpoint: past
// it (a file whose checkpoints stopped), it reads the file from its start.
const maxTail = 256 << 20

// Resumed is the checkpoint a Reader starts after.
type Resumed struct {
	// State is the Shadow's State as it was written.
	State []byte
	// Records counts the records before it; Last is the newest one's time.
	Records int
	Last    time.Time
}

// Resume opens the recording at path to start from its last checkpoint
// written by build. It reads the file to its end, keeping only the lines
// after the newest checkpoint, and returns the checkpoint and a Reader of
// the records after it. When there is none to use, the checkpoint is nil,
// the Reader reads the file from its start, and why says why ("" when the
// file is too short to hold one).
func Resume(path, build string) (r *Reader, from *Resumed, why string, err error) {
	return resume(path, build, time.Time{})
}

// ResumeBefore is Resume for a replay up to the moment t: it starts from
// the newest checkpoint whose records all came at or before t (snapshot
// --from --at), found from the file's end through the marked gzip
// members. Where none is (t before the first checkpoint, a file whose
// members are not marked), the Reader reads the file from its start and
// the checkpoint is nil.
func ResumeBefore(path, build string, t time.Time) (r *Reader, from *Resumed, why string, err error) {
	return resume(path, build, t)
}

// resume is Resume, bounded by before unless it is zero.
func resume(path, build string, before time.Time) (r *Reader, from *Resumed, why string, err error) {
	r, err = Open(path)
	if err != nil {
		return nil, nil, "", err
	}
	c := r.header.Checkpoints
	switch {
	case c == nil:
		return r, nil, "it holds no checkpoints (recorded by an llmtop before they were written)", nil
	case build == "" || c.Build != build:
		return r, nil, "its checkpoints were written by another llmtop build", nil
	case r.pending == nil:
		return r, nil, "", nil
	}
	if f, err := os.Open(path); err == nil {
		if st, err := f.Stat(); err == nil {
			for _, off := range markedMembers(f, st.Size()) {
				tr, from, ok := fromMember(r, f, off, st.Size(), build)
				if ok && !before.IsZero() && from.Last.After(before) {
					continue // tr is dropped, f read on
				}
				if ok {
					r.Close()
					return tr, from, "", nil
				}
			}
		}
		f.Close()
	}
	if !before.IsZero() { // the start serves: the line scan is for the last one
		return r, nil, "", nil
	}
	// No marked member to start from (a damaged one, or a file written
	// before checkpoints started members): read it through for the last
	// checkpoint line.
	var (
		tail    = append(append([]byte(nil), r.pendingRaw...), '\n')
		cp      []byte
		scanErr error
	)
	prefix := []byte(`,"k":"` + kindCheckpoint + `",`)
	for {
		l, err := r.in.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a long line: gather it whole
			whole := append([]byte(nil), l...)
			for err == bufio.ErrBufferFull && len(whole) <= maxLine {
				l, err = r.in.ReadSlice('\n')
				whole = append(whole, l...)
			}
			if len(whole) > maxLine { // the reader from the start says so
				return reopen(r, path, "")
			}
			l = whole
		}
		if i := bytes.IndexByte(l, ','); err == nil && i > 0 && i < 32 && bytes.HasPrefix(l[i:], prefix) {
			cp, tail = append(cp[:0], l...), tail[:0]
		} else {
			tail = append(tail, l...)
		}
		if err != nil {
			if err != io.EOF {
				scanErr = err
			}
			break
		}
		if len(tail) > maxTail {
			return reopen(r, path, fmt.Sprintf("it holds no checkpoint in its last %d MiB", maxTail>>20))
		}
	}
	if cp == nil {
		return reopen(r, path, "")
	}
	var l line
	var m checkpointLine
	if json.Unmarshal(cp, &l) != nil || json.Unmarshal(l.M, &m) != nil || m.Build != build {
		return reopen(r, path, "its last checkpoint could not be read")
	}
	r.closer.Close()
	var rest io.Reader = bytes.NewReader(tail)
	if scanErr != nil {
		rest = io.MultiReader(rest, errReader{scanErr})
	}
	tr := &Reader{name: r.name, header: r.header, in: bufio.NewReaderSize(rest, 256<<10), unknown: map[string]int{},
		notes: r.notes}
	tr.restore(m.Read)
	return tr, &Resumed{State: m.State, Records: tr.n, Last: tr.last}, "", nil
}

// reopen closes r and opens path again to read from its start.
func reopen(r *Reader, path, why string) (*Reader, *Resumed, string, error) {
	r.Close()
	nr, err := Open(path)
	return nr, nil, why, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
