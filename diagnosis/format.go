package diagnosis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// secs formats a duration in seconds the way the panes do: "180 ms", "2.4 s".
func secs(s float64) string {
	// strconv, not fmt: the same digits (fmt's %.Nf is strconv's 'f'),
	// at a third of the cost; a fleet's findings print thousands a refresh
	switch {
	case s < 0.001:
		return fixed(s*1000, 2, " ms")
	case s < 1:
		return fixed(s*1000, 0, " ms")
	case s < 10:
		return fixed(s, 1, " s")
	default:
		return fixed(s, 0, " s")
	}
}

// fixed is fmt.Sprintf("%.<prec>f", v) + unit.
func fixed(v float64, prec int, unit string) string {
	var b [32]byte
	return string(append(strconv.AppendFloat(b[:0], v, 'f', prec, 64), unit...))
}

// dur formats a configured duration compactly: "200 ms", "5m0s" → "5 m".
func dur(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	case d < time.Minute:
		return fixed(d.Seconds(), 0, " s")
	case d%time.Minute == 0:
		return strconv.Itoa(int(d.Minutes())) + " m"
	default:
		return d.Round(time.Second).String()
	}
}

// pct formats a 0–1 ratio as a percentage.
func pct(r float64) string {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0):
		return "?"
	case r > 1.005:
		return ">100 %" // a share or a usage past whole: the source's error, bounded
	}
	if r > 0 && r < 0.1 {
		return fixed(r*100, 1, " %")
	}
	return fixed(r*100, 0, " %")
}

// num formats a count or rate with at most one decimal.
func num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "?"
	case math.Abs(v) >= 1e12:
		return strings.Replace(fmt.Sprintf("%.1e", v), "e+", "e", 1) // bounded: a 1e308 printed 309 digits
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// optNum formats a value that may be absent: "--" when it is.
func optNum(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	return num(o.V)
}

// gib formats bytes as GiB.
func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// roundDown rounds n down to a multiple of step (at least step).
func roundDown(n, step int) int {
	if n < step {
		return step
	}
	return n / step * step
}

// plural is "1 restart", "3 restarts".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// ago is how long ago, to the second: "just now" under a second.
func ago(d time.Duration) string {
	if d < time.Second {
		return "just now"
	}
	return dur(d.Round(time.Second)) + " ago"
}

// optPct formats a ratio that may be absent: "--" when it is.
func optPct(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	return pct(o.V)
}
