package model

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// leftUserinfo finds a URL's user:password@ that is not the redaction.
var leftUserinfo = regexp.MustCompile(`://[^/?#\s@"'\\<>]+@`)

// FuzzSanitize: whatever the bytes, SanitizeLine and Clean give valid UTF-8
// without a control, format or variation character (nothing that moves the
// cursor, sets a colour or has a width the terminal may disagree on); Clean
// is idempotent; SafeOutput keeps only newlines and tabs as controls; and
// after RedactText no URL userinfo is left but REDACTED.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{
		"INFO 08-14 12:00:01 [loggers.py:259] Engine 000: Avg prompt throughput: 1234.5 tokens/s",
		"\x1b[32mINFO\x1b[0m ok", "x\x1b]0;pwned\x07y\x1b[2J", "\x1b]52;c;cHduZWQ=\x07", "a\u009b2Jb\u009d0;t\u009c",
		"model evil \x1b[41;5mBLINK", "a\tb\r\nc\u202e\u200b\u2764\ufe0f", "\xff\xfe\xc3",
		"Get \"http://alice:PASSWORD42@h:8000/metrics?token=X&api_key=Y\": refused",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		line, field := SanitizeLine(raw), Clean(string(raw))
		for _, s := range []string{line, field} {
			if !utf8.ValidString(s) || Unsafe(s) {
				t.Fatalf("unsafe %q from %q", s, raw)
			}
		}
		if again := Clean(field); again != field {
			t.Fatalf("Clean not idempotent: %q → %q", field, again)
		}
		for _, r := range SafeOutput(string(raw)) {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("control %U in SafeOutput(%q)", r, raw)
			}
		}
		red := RedactText(string(raw))
		for _, m := range leftUserinfo.FindAllString(red, -1) {
			if m != "://"+Redacted+"@" {
				t.Fatalf("userinfo %q left in %q", m, red)
			}
		}
		if Unsafe(red) || Unsafe(RedactURL(string(raw))) {
			t.Fatalf("redaction let unsafe text through: %q", raw)
		}
		if strings.Count(red, "\n") != 0 {
			t.Fatalf("RedactText kept a line break: %q", red)
		}
	})
}
