package logs

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// FuzzLogLine sends any raw line the way the source does — sanitised, then
// matched against the catalogue, then to the stats parsers — and checks
// what reaches the screen: the line, the event's title and fields hold no
// control sequence, and no stats sample holds a value no engine can mean.
// Seeds are the catalogue's real log lines.
func FuzzLogLine(f *testing.F) {
	for _, ex := range catalogueExamples {
		f.Add([]byte(ex.line))
	}
	for _, ex := range catalogueNearMisses {
		f.Add([]byte(ex.line))
	}
	f.Add([]byte("[GIN] 2026/08/21 - 10:00:00 | 200 |  -3000ms | 127.0.0.1 | POST \"/api/chat\"\x1b]0;t\x07"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		line := model.SanitizeLine(raw)
		if model.Unsafe(line) {
			t.Fatalf("unsafe line %q", line)
		}
		st := newStatsState("http://e", "m")
		at := time.Date(2026, 8, 21, 10, 0, 0, 0, time.UTC)
		for i := 0; i < 2; i++ { // twice: stats that need a previous line
			mt, ok := DefaultMatcher.Match(line)
			if !ok {
				return
			}
			ev := mt.Event(at, "http://e", line)
			if ev == nil {
				t.Fatalf("match %s without an event", mt.Pattern.ID)
			}
			for _, s := range []string{ev.Title, ev.Line} {
				if model.Unsafe(s) {
					t.Fatalf("%s: unsafe event text %q", mt.Pattern.ID, s)
				}
			}
			for k, v := range ev.Fields {
				if model.Unsafe(k) || model.Unsafe(v) {
					t.Fatalf("%s: unsafe field %q=%q", mt.Pattern.ID, k, v)
				}
			}
			for _, s := range st.feed(mt, line, at.Add(time.Duration(i)*time.Second)) {
				for g, v := range s.Gauges {
					if !model.Plausible(v) {
						t.Fatalf("%s: gauge %s = %v", mt.Pattern.ID, g, v)
					}
				}
				for c, v := range s.Counters {
					if !model.Plausible(v) {
						t.Fatalf("%s: counter %s = %v", mt.Pattern.ID, c, v)
					}
				}
				for l, h := range s.Latencies {
					if !model.PlausibleHist(h) {
						t.Fatalf("%s: latency %s = %+v", mt.Pattern.ID, l, h)
					}
				}
			}
		}
	})
}
