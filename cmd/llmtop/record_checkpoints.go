package main

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/llmtop/llmtop/checkpoint"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
)

// A recording of the monitor (or the demo) holds checkpoints of the core
// it replays into, every checkpointEvery of recorded time, so that
// `diagnose --from` judges a day from its last half hour, not its first
// second (docs/recording.md, issue 33). The writer feeds a core of its own
// what it writes (a second core while recording: about what the replay
// costs a recorded second) and keeps its state with the checkpoint
// package; the state is for this build of llmtop only (buildID).

// checkpointEvery is the recorded time between two checkpoints: what
// `diagnose --from` replays at most, and about 0.5 MB of file each.
var checkpointEvery = 30 * time.Minute

// buildID names this build of llmtop: a checkpoint holds the core's
// fields as this build lays them out, and what its rules made of the
// records. "" (the executable unreadable): no checkpoints.
var buildID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
})

// checkpointed names h's checkpoints when its face replays into the
// monitor's core (a diagnose recording replays its watch: none).
func checkpointed(h recording.Header) recording.Header {
	if id := buildID(); id != "" && h.Face != "diagnose" {
		h.Checkpoints = &recording.Checkpoints{Build: id, Every: recording.Duration(checkpointEvery)}
	}
	return h
}

// createRecording makes the recording at path and, when its header names
// checkpoints, the core that checkpoints it.
func createRecording(path string, h recording.Header, secrets ...string) (*recording.Writer, error) {
	h = checkpointed(h)
	w, err := recording.Create(path, h, secrets...)
	if err != nil {
		return nil, err
	}
	shadow(w, h)
	return w, nil
}

// shadow sets w's checkpointing core when h names checkpoints.
func shadow(w *recording.Writer, h recording.Header) {
	if h.Checkpoints != nil {
		w.SetShadow(func(h recording.Header) recording.Shadow { return &coreShadow{mon: session.ReplayCore(h)} })
	}
}

// coreShadow is the writer's core: fed as a replay feeds it.
type coreShadow struct {
	mon *core.Monitor
	raw []byte
	z   bytes.Buffer
	fw  *flate.Writer
}

func (s *coreShadow) Feed(r recording.Record) { session.Feed(s.mon, r) }

func (s *coreShadow) State() ([]byte, error) {
	c := checkpoint.New()
	raw, err := c.Encode(s.raw[:0], s.mon)
	if err != nil {
		return nil, err
	}
	s.raw = raw
	if !c.Portable() {
		return nil, errors.New("the core holds state a checkpoint cannot keep in a file")
	}
	s.z.Reset()
	if s.fw == nil {
		s.fw, _ = flate.NewWriter(&s.z, flate.DefaultCompression)
	} else {
		s.fw.Reset(&s.z)
	}
	s.fw.Write(raw)
	if err := s.fw.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(s.z.Bytes()), nil
}

// coreFrom is the core a checkpoint's state holds.
func coreFrom(state []byte) (*core.Monitor, error) {
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(state)))
	if err != nil {
		return nil, fmt.Errorf("its checkpoint does not decompress: %w", err)
	}
	return checkpoint.Decode[*core.Monitor](checkpoint.New(), raw)
}
