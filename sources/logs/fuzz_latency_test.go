package logs

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// FuzzLogLatency checks the values a log's per-request latency becomes,
// not only that nothing panics: an Ollama access line with any latency
// text gives exactly the latency Go's time.ParseDuration reads from that
// field (in seconds) when it is a duration ≥ 0, and none otherwise (a
// negative or unreadable latency is no request's); every observation of
// any line is finite and ≥ 0.
func FuzzLogLatency(f *testing.F) {
	for _, s := range []string{"1.234567ms", "2.5s", "-3000ms", "1h2m", "NaN", "9999999999h", "0s", "12µs", "1e400s", ""} {
		f.Add(s, uint16(200))
	}
	f.Add("350ms", uint16(500))
	f.Fuzz(func(t *testing.T, lat string, status uint16) {
		if strings.ContainsAny(lat, "|\n\r") {
			return // the field's separator: another line's shape
		}
		raw := "[GIN] 2026/08/21 - 10:00:00 | " + itoa(int(status)) + " | " + lat + " | 127.0.0.1 | POST \"/api/chat\""
		line := model.SanitizeLine([]byte(raw))
		mt, ok := DefaultMatcher.Match(line)
		if lat == "2.5s" && status == 200 && (!ok || mt.Pattern.ID != "ollama_request") {
			t.Fatalf("the seed line is not read as Ollama's access log: %q", line)
		}
		if !ok {
			return
		}
		at := time.Date(2026, 8, 21, 10, 0, 0, 0, time.UTC)
		st := newStatsState("http://e", "m")
		var got []float64
		for _, s := range st.feed(mt, line, at) {
			for _, o := range s.Observations {
				for l, v := range o.Values {
					if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
						t.Fatalf("%s = %v from %q", l, v, line)
					}
					got = append(got, v)
				}
			}
		}
		if mt.Pattern.ID != "ollama_request" {
			return
		}
		field := mt.Fields["latency"]
		d, err := time.ParseDuration(field)
		want := err == nil && d >= 0 && status < 400 && status >= 100
		switch {
		case want && (len(got) != 1 || got[0] != d.Seconds()):
			t.Fatalf("latency %q (status %d): observations %v, want [%v]", field, status, got, d.Seconds())
		case !want && len(got) != 0:
			t.Fatalf("latency %q (status %d): observations %v, want none", field, status, got)
		}
	})
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
