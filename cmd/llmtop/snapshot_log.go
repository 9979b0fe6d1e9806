package main

import (
	"errors"
	"sync"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/logs"
)

// snapshotLogTail is how much of each --log file's end a snapshot reads:
// the monitor's backlog is 64 KiB, a snapshot has no later lines to wait
// for, so it reads more (thousands of requests' timing lines).
const snapshotLogTail = 4 << 20

// snapshotLogs reads each --log file's end at once, as the monitor reads
// its backlog on start: its events, stats lines and per-request timings
// (llama-server, TGI, Ollama) reach the snapshot's core before the scrapes.
// Lines without a wall-clock stamp (llama-server prints time since its
// start) are placed just before the first scrape, in their order.
// Followed logs (--log-cmd, --docker, --journal, --kube) never end: a
// snapshot cannot read them, and says so.
//
// untimed counts the requests timed by lines without a wall-clock stamp:
// placed at the clock, not at when they ran, they are not "in the window"
// (markUntimed says so in the snapshot).
func snapshotLogs(urls []string, interval time.Duration) (out []any, untimed int, err error) {
	if len(logFlags.files) == 0 {
		return nil, 0, nil
	}
	if len(logFlags.commands)+len(logFlags.docker)+len(logFlags.journal)+len(logFlags.kube) > 0 {
		return nil, 0, errors.New("snapshot reads --log files only: a followed log (--log-cmd, --docker, --journal, --kube) never ends; use `llmtop diagnose --for 30s` with it")
	}
	endpoint := ""
	if len(urls) == 1 {
		cfg, err := engineConfig(urls[0], interval)
		if err != nil {
			return nil, 0, err
		}
		endpoint, _ = engine.SplitURL(cfg.URL)
	}
	base := time.Now().Add(-time.Second)
	for _, f := range logFlags.files {
		msgs, err := logs.ReadTail(f, snapshotLogTail, logs.Options{Endpoint: endpoint, Now: stepClock(base)})
		if err != nil {
			return nil, 0, err
		}
		out = append(out, msgs...)
	}
	// A line placed at the clock has no time of its own: its start banner,
	// crash or shutdown happened at some time before, as in the monitor's
	// backlog (an appended log's second start banner made every snapshot
	// RESTARTED, run 2 "started" a second ago).
	untimedLine := func(l *model.LogLine) {
		if l.Time.Before(base) {
			return
		}
		l.Backlog = true
		if l.Event != nil {
			ev := *l.Event
			ev.Backlog, ev.Untimed = true, true
			l.Event = &ev
		}
	}
	for i, m := range out {
		switch v := m.(type) {
		case model.Sample:
			if len(v.Observations) > 0 && !v.Observations[0].Time.Before(base) {
				untimed++
			}
		case model.LogLine:
			untimedLine(&v)
			out[i] = v
		case model.LogLines:
			for j := range v {
				untimedLine(&v[j])
			}
		}
	}
	return out, untimed, nil
}

// markUntimed tells, on each endpoint's latencies from the log, that the
// requests they count (n > 0 of them) were read from lines without a wall-clock time
// (llama-server's: time since its start), so the window does not bound
// them: their window_s is dropped and a note says why. (They read "latency
// over 2.0s … count 532" for a log's last 532 requests, on an idle
// server too.)
func markUntimed(doc *model.SnapshotJSON, n int) {
	if n == 0 {
		return
	}
	for i := range doc.Endpoints {
		m := doc.Endpoints[i].Metrics
		if m == nil {
			continue
		}
		marked := false
		for _, d := range []*model.DistJSON{&m.TTFTms, &m.TPOTms, &m.ITLms, &m.E2Ems, &m.Queuems, &m.Prefillms, &m.Decodems} {
			if d.Source == model.FromLog {
				d.WindowS, marked = 0, true
			}
		}
		if marked {
			doc.Endpoints[i].Notes = append(doc.Endpoints[i].Notes,
				"latencies from the log (source log) count the requests its file's end timed, read at once: its lines carry no wall-clock time (llama-server stamps time since its start), so they are not bounded by the window")
		}
	}
}

// stepClock is a clock that starts at t and moves on a microsecond per
// reading, so a file's unstamped lines keep their order in the store.
func stepClock(t time.Time) func() time.Time {
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Microsecond)
		return t
	}
}
