package model

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitizeLine(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "INFO 08-14 12:00:01 hello", "INFO 08-14 12:00:01 hello"},
		{"tab expanded to the next stop", "ab\tc\td", "ab      c       d"},
		{"vllm colour", "\x1b[32mINFO\x1b[0m 08-14 12:00:01 [loggers.py:259] ok", "INFO 08-14 12:00:01 [loggers.py:259] ok"},
		{"cursor moves", "a\x1b[2J\x1b[H\x1b[10;20Hb\x1b[?25l", "ab"},
		{"title via OSC BEL", "x\x1b]0;pwned\x07y", "xy"},
		{"title via OSC ST", "x\x1b]2;pwned\x1b\\y", "xy"},
		{"clipboard OSC 52", "x\x1b]52;c;cHduZWQ=\x07y", "xy"},
		{"hyperlink OSC 8", "\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"charset ESC (", "a\x1b(Bb", "ab"},
		{"C0 controls", "a\x00b\x07c\x08d\x7fe", "abcde"},
		{"C1 CSI U+009B", "a\u009b2Jb", "ab"},
		{"C1 OSC U+009D", "a\u009d0;t\u009cb", "ab"},
		{"other C1", "a\u0085b", "ab"},
		{"invalid utf8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"unicode kept", "GPU 温度 ✓", "GPU 温度 ✓"},
		{"bidi override and zero-width dropped", "a\u202eb\u200bc\u00add", "abcd"},
		{"emoji variation selector dropped", "\u2764\ufe0f", "\u2764"},
		{"line separator", "a\u2028b", "a b"},
		{"CRLF", "line\r", "line"},
		{"tqdm progress", "Loading:  10%|#  \rLoading:  50%|#####  \rLoading: 100%|##########", "Loading: 100%|##########"},
		{"tqdm then CRLF", "a 10%\rb 100%\r", "b 100%"},
		{"unterminated CSI", "a\x1b[12", "a"},
		{"lone ESC", "a\x1b", "a"},
	}
	for _, c := range cases {
		if got := SanitizeLine([]byte(c.in)); got != c.want {
			t.Errorf("%s: SanitizeLine(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestClean(t *testing.T) {
	cases := []struct{ in, want string }{
		{"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"},
		{"model evil \x1b[41;5mBLINK\x1b[0m", "model evil BLINK"},
		{"a\tb\nc\r\nd", "a b c  d"},
		{"[\x1b]0;pwned\x07\x1b[2J]", "[]"},
	}
	for _, c := range cases {
		if got := Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
		if Unsafe(Clean(c.in)) {
			t.Errorf("Clean(%q) is still unsafe", c.in)
		}
	}
}

// Whatever the input, the output is valid UTF-8 with no control character:
// nothing can reach the terminal that moves the cursor or sets a colour.
func TestSanitizeNeverLeaksControls(t *testing.T) {
	seed := uint32(1)
	for i := 0; i < 2000; i++ {
		b := make([]byte, 64)
		for j := range b {
			seed = seed*1664525 + 1013904223
			b[j] = byte(seed >> 24)
		}
		for _, out := range []string{SanitizeLine(b), Clean(string(b))} {
			if !utf8.ValidString(out) || Unsafe(out) {
				t.Fatalf("unsafe %q left from %q", out, b)
			}
		}
	}
}

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000"},
		{"http://alice:PASSWORD42@h:8000/v1", "http://REDACTED@h:8000/v1"},
		{"http://h/metrics?token=abc&model=x", "http://h/metrics?token=REDACTED&model=x"},
		{"https://h/?api_key=1&access_token=2&sig=3&X-Amz-Signature=4&password=5&client_secret=6&key=7",
			"https://h/?api_key=REDACTED&access_token=REDACTED&sig=REDACTED&X-Amz-Signature=REDACTED&password=REDACTED&client_secret=REDACTED&key=REDACTED"},
		{"http://h:8000/\x1b]0;x\x07", "http://h:8000/"},
	}
	for _, c := range cases {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRedactTextAndSafeOutput(t *testing.T) {
	msg := `Get "http://alice:s3cret@h:8000/metrics?token=XYZ": dial tcp: connection refused`
	if got := RedactText(msg); strings.Contains(got, "s3cret") || strings.Contains(got, "XYZ") || strings.Contains(got, "alice") {
		t.Errorf("RedactText = %q", got)
	}
	// encoding/json writes & as \u0026: the second parameter is found too,
	// and the document stays JSON.
	doc := "{\n  \"url\": \"http://h/v1?a=1\\u0026api_key=XYZ\",\n\t\"m\": \"x\\u001b[2J\u009b31m\"\n}"
	got := SafeOutput(doc)
	want := "{\n  \"url\": \"http://h/v1?a=1\\u0026api_key=REDACTED\",\n\t\"m\": \"x\\u001b[2J\"\n}"
	if got != want {
		t.Errorf("SafeOutput =\n%s\nwant\n%s", got, want)
	}
}

func TestRedactCmdline(t *testing.T) {
	cases := []struct{ in, want string }{
		{"vllm serve m --api-key sk-123 --max-num-batched-tokens 8192 --tokenizer t",
			"vllm serve m --api-key REDACTED --max-num-batched-tokens 8192 --tokenizer t"},
		{"python -m sglang.launch_server --hf-token=hf_abc --port 30000", "python -m sglang.launch_server --hf-token=REDACTED --port 30000"},
		{"curl http://u:p@h/x?token=1 --password  hunter2", "curl http://REDACTED@h/x?token=REDACTED --password  REDACTED"},
		{"evil \x1b]0;t\x07--api-key k", "evil --api-key REDACTED"},
		// the environment llmtop run launches with
		{"HF_TOKEN=hf_abc OLLAMA_NUM_PARALLEL=4 VLLM_MAX_TOKENS=8 ollama serve", "HF_TOKEN=REDACTED OLLAMA_NUM_PARALLEL=4 VLLM_MAX_TOKENS=8 ollama serve"},
	}
	for _, c := range cases {
		if got := RedactCmdline(c.in); got != c.want {
			t.Errorf("RedactCmdline(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
