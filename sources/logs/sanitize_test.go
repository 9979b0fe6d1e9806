package logs

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	if got := Cut("short", 10); got != "short" {
		t.Error(got)
	}
	long := strings.Repeat("é", 100) // 200 bytes
	got := Cut(long, 11)
	if !utf8.ValidString(got) || !strings.HasPrefix(got, strings.Repeat("é", 5)+" … [190 more bytes]") {
		t.Errorf("Cut = %q", got)
	}
}

func TestLineTime(t *testing.T) {
	utc := time.UTC
	arrival := time.Date(2026, 8, 22, 10, 0, 0, 500e6, utc)
	cases := []struct {
		name, line string
		want       time.Time
	}{
		{"vllm", "INFO 08-22 09:59:50 [loggers.py:259] x", time.Date(2026, 8, 22, 9, 59, 50, 0, utc)},
		{"vllm child", "(EngineCore_DP0 pid=456) WARNING 08-22 09:59:50 [x.py:1] y", time.Date(2026, 8, 22, 9, 59, 50, 0, utc)},
		{"vllm live refined", "INFO 08-22 10:00:00 [loggers.py:259] x", arrival},
		{"sglang", "[2026-08-22 09:00:01 TP0] Decode batch", time.Date(2026, 8, 22, 9, 0, 1, 0, utc)},
		{"sglang ms", "[2026-08-22 09:00:01.250 TP0] Decode batch", time.Date(2026, 8, 22, 9, 0, 1, 250e6, utc)},
		{"docker timestamps", "2026-08-22T09:30:00.123456789Z INFO 08-22 09:30:00 x", time.Date(2026, 8, 22, 9, 30, 0, 123456789, utc)},
		{"ollama slog", "time=2026-08-22T11:30:00.000+02:00 level=INFO msg=x", time.Date(2026, 8, 22, 9, 30, 0, 0, utc)},
		{"journal", "Aug 22 09:45:00 gpu1 vllm[123]: INFO 08-22 09:45:00 x", time.Date(2026, 8, 22, 9, 45, 0, 0, utc)},
		{"no stamp", "srv  main: model loaded", arrival},
		{"future = zone mismatch", "INFO 08-22 15:00:00 [x.py:1] y", arrival},
		{"bad month", "[2026-13-22 09:00:01] x", arrival},
	}
	for _, c := range cases {
		if got := lineTime(c.line, arrival, utc); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A December line read in January belongs to last year.
	jan := time.Date(2027, 1, 1, 0, 0, 5, 0, utc)
	if got := lineTime("INFO 12-31 23:59:59 [x.py:1] y", jan, utc); got.Year() != 2026 {
		t.Errorf("year rollover: %v", got)
	}
}
