package main

import (
	"errors"
	"sync"
	"time"

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
func snapshotLogs(urls []string, interval time.Duration) ([]any, error) {
	if len(logFlags.files) == 0 {
		return nil, nil
	}
	if len(logFlags.commands)+len(logFlags.docker)+len(logFlags.journal)+len(logFlags.kube) > 0 {
		return nil, errors.New("snapshot reads --log files only: a followed log (--log-cmd, --docker, --journal, --kube) never ends; use `llmtop diagnose --for 30s` with it")
	}
	endpoint := ""
	if len(urls) == 1 {
		cfg, err := engineConfig(urls[0], interval)
		if err != nil {
			return nil, err
		}
		endpoint, _ = engine.SplitURL(cfg.URL)
	}
	var out []any
	for _, f := range logFlags.files {
		msgs, err := logs.ReadTail(f, snapshotLogTail, logs.Options{Endpoint: endpoint, Now: stepClock(time.Now().Add(-time.Second))})
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
	}
	return out, nil
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
