package logs

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "INFO 08-14 12:00:01 hello", "INFO 08-14 12:00:01 hello"},
		{"tab kept", "a\tb", "a\tb"},
		{"vllm colour", "\x1b[32mINFO\x1b[0m 08-14 12:00:01 [loggers.py:259] ok", "INFO 08-14 12:00:01 [loggers.py:259] ok"},
		{"cursor moves", "a\x1b[2J\x1b[H\x1b[10;20Hb\x1b[?25l", "ab"},
		{"title via OSC BEL", "x\x1b]0;pwned\x07y", "xy"},
		{"title via OSC ST", "x\x1b]2;pwned\x1b\\y", "xy"},
		{"hyperlink OSC 8", "\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"charset ESC (", "a\x1b(Bb", "ab"},
		{"C0 controls", "a\x00b\x07c\x08d\x7fe", "abcde"},
		{"C1 CSI U+009B", "a\u009b2Jb", "ab"},
		{"C1 OSC U+009D", "a\u009d0;t\u009cb", "ab"},
		{"other C1", "a\u0085b", "ab"},
		{"invalid utf8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"unicode kept", "GPU 温度 ✓", "GPU 温度 ✓"},
		{"CRLF", "line\r", "line"},
		{"tqdm progress", "Loading:  10%|#  \rLoading:  50%|#####  \rLoading: 100%|##########", "Loading: 100%|##########"},
		{"tqdm then CRLF", "a 10%\rb 100%\r", "b 100%"},
		{"unterminated CSI", "a\x1b[12", "a"},
		{"lone ESC", "a\x1b", "a"},
	}
	for _, c := range cases {
		if got := Sanitize([]byte(c.in)); got != c.want {
			t.Errorf("%s: Sanitize(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// Whatever the input, the output is valid UTF-8 with no control character
// but tab: nothing can reach the terminal that moves the cursor.
func TestSanitizeNeverLeaksControls(t *testing.T) {
	seed := uint32(1)
	for i := 0; i < 2000; i++ {
		b := make([]byte, 64)
		for j := range b {
			seed = seed*1664525 + 1013904223
			b[j] = byte(seed >> 24)
		}
		out := Sanitize(b)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from %q", b)
		}
		for _, r := range out {
			if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("control %U left in %q (from %q)", r, out, b)
			}
		}
	}
}

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
