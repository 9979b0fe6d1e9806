package tui

import (
	"math"
	"slices"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// FuzzParseConfig: any config file parses or fails with a message that is
// safe to print (no escape from the file reaches the terminal); what it
// accepts holds no negative, NaN or infinite duration or threshold, no key
// name that is empty or unsafe to draw, and quit stays reachable (ctrl+c);
// its endpoints and strings are safe to print.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"theme = \"dark\"\nno_color = true\nendpoints = [\"http://127.0.0.1:8000\", \"gpu1:30000\"]\ninterval = \"2s\"\nwindow = \"5m\"\n",
		"[thresholds]\nttft_p99_ms = 500\nitl_p99_ms = 40\nkv_warn_pct = 80\nkv_crit_pct = 95\nwaiting_max = 3\ngpu_temp_c = 85\n",
		"[keys]\nquit = [\"q\", \"ctrl+c\"]\nbench = [\"B\"]\n",
		"[\x1b]0;pwned\x07\x1b[2J]\n", "interval = \"-5s\"\n", "[thresholds]\nttft_p99_ms = NaN\nkv_warn_pct = +Inf\n",
		"[keys]\nquit = [\"\\u001b]0;pwned\\u0007\"]\n", "[keys]\nquit = [\"\"]\n", "[keys]\nquit = [\"x\"]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("config.toml", data)
		if err != nil {
			if model.Unsafe(err.Error()) {
				t.Fatalf("unsafe error %q", err.Error())
			}
			return
		}
		for _, b := range c.Keys.bindings() {
			for _, k := range b.Keys() {
				if checkKeyName(k) != nil || model.Unsafe(b.Help().Key) {
					t.Fatalf("accepted key %q (help %q)", k, b.Help().Key)
				}
			}
		}
		if !slices.Contains(c.Keys.Quit.Keys(), "ctrl+c") {
			t.Fatalf("quit is %v: ctrl+c must always quit", c.Keys.Quit.Keys())
		}
		for _, s := range append([]string{c.Theme}, c.Endpoints...) {
			if model.Unsafe(s) {
				t.Fatalf("accepted unsafe text %q", s)
			}
		}
		if c.Interval < 0 || c.Window < 0 {
			t.Fatalf("interval %v window %v", c.Interval, c.Window)
		}
		th := c.Thresholds
		for _, d := range []float64{th.TTFTp99.Seconds(), th.ITLp99.Seconds(), th.KVFor.Seconds(), th.WaitingFor.Seconds(),
			th.KVWarn, th.KVCrit, th.WaitingMax, th.GPUTemp, th.GPUMem, th.GPUIdle, th.WaitingHigh, th.PreemptPS} {
			if d < 0 || math.IsNaN(d) || math.IsInf(d, 0) {
				t.Fatalf("threshold %v in %+v", d, th)
			}
		}
	})
}
