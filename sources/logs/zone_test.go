package logs

import (
	"context"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// vLLM stamps its lines with no zone ("INFO 11-27 01:23:45"). A backlog
// event's time was read in llmtop's zone whatever the engine's: five and a
// half hours off for an engine in India watched from UTC. The engine's
// zone, when its process is known here, reads it right; when it is not,
// the event says its time is the engine's wall clock, zone unknown. A live
// line far from its arrival is another zone's: the arrival stands.
func TestZoneLessStampsReadInTheEnginesZone(t *testing.T) {
	// a real vLLM line (testdata/real-lines.txt, vllm_model_loading), dated
	const line = "(EngineCore_DP0 pid=497) INFO 11-27 01:23:45 [gpu_model_runner.py:2392] Model loading took 27.5185 GiB and 305.873276 seconds"
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Skip("no tzdata: ", err)
	}
	now := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	read := func(loc *time.Location, known, backlog bool, text string) model.LogLine {
		t.Helper()
		c := &collector{}
		opts := unlimited
		opts.Location, opts.Now = time.UTC, func() time.Time { return now }
		opts.Zone = func() (*time.Location, bool) { return loc, known }
		src := NewSource(opts, c.send)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go src.Run(ctx)
		src.line([]byte(text), backlog)
		waitFor(t, "the line", func() bool { return len(c.lines()) == 1 })
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.msgs[0].(model.LogLine)
	}

	// the engine's process is known: its zone, Asia/Kolkata (+05:30)
	ll := read(kolkata, true, true, line)
	if ev := ll.Event; ev == nil || !ev.Time.Equal(time.Date(2026, 11, 26, 19, 53, 45, 0, time.UTC)) || ev.ZoneUnknown {
		t.Fatalf("known zone: event %+v, want 19:53:45 UTC", ev)
	}
	// unknown: the engine's wall clock, said so
	ll = read(time.UTC, false, true, line)
	if ev := ll.Event; ev == nil || !ev.ZoneUnknown || ev.When(kolkata) != "01:23:45 engine-local time, zone unknown" {
		t.Fatalf("unknown zone: event %+v, reads %q", ev, ll.Event.When(kolkata))
	}
	// a zone in the stamp itself is no engine-local time
	ll = read(time.UTC, false, true, `time=2026-11-27T01:23:45.000+05:30 level=INFO source=routes.go:1500 msg="Listening on 127.0.0.1:11434 (version 0.17.4)"`)
	if ev := ll.Event; ev == nil || ev.ZoneUnknown || !ev.Time.Equal(time.Date(2026, 11, 26, 19, 53, 45, 0, time.UTC)) {
		t.Fatalf("stamp with its zone: event %+v", ev)
	}
	// live, zone unknown: stamped 01:23:45 and read at 03:00 UTC is an
	// engine two hours ahead or behind, not a line logged 96 minutes ago
	ll = read(time.UTC, false, false, line)
	if ev := ll.Event; ev == nil || !ev.Time.Equal(now) || ev.ZoneUnknown || !ll.Time.Equal(now) {
		t.Fatalf("live line off its arrival: %+v", ev)
	}
	// live, stamped as it arrives: the zones agree (a whole-second stamp
	// refined by the arrival, as ever)
	ll = read(time.UTC, false, false, "(EngineCore_DP0 pid=497) INFO 11-27 02:59:59 [gpu_model_runner.py:2392] Model loading took 27.5185 GiB and 305.873276 seconds")
	if ev := ll.Event; ev == nil || !ev.Time.Equal(now) || ev.ZoneUnknown {
		t.Fatalf("live line at its arrival: %+v", ev)
	}
}
