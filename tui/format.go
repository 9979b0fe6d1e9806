package tui

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/model"
)

// missing is how an absent number renders everywhere: not exposed, not
// read, not yet known.
const missing = "--"

// notSupported is how a field renders that the source said the hardware
// does not have (NVML's NOT_SUPPORTED: MIG, unified memory, consumer
// cards), as opposed to one that is merely missing.
const notSupported = "n/a"

// fmtSec formats a duration in seconds: "850µs", "45ms", "1.23s", "2m05s".
func fmtSec(v model.Opt) string {
	if !v.OK {
		return missing
	}
	s := v.V
	switch {
	case s < 0:
		return missing
	case s == 0:
		return "0"
	case s < 0.001:
		return fmt.Sprintf("%.0fµs", s*1e6)
	case s < 0.0995:
		return trimZero(fmt.Sprintf("%.1f", s*1000)) + "ms"
	case s < 1:
		return fmt.Sprintf("%.0fms", s*1000)
	case s < 10:
		return fmt.Sprintf("%.2fs", s)
	case s < 100:
		return fmt.Sprintf("%.1fs", s)
	default:
		d := time.Duration(s * float64(time.Second)).Round(time.Second)
		return fmtDur(d)
	}
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// fmtDur formats a span for labels: "1s", "250ms", "1m", "5m30s", "2h10m"
// (config.DurText).
func fmtDur(d time.Duration) string { return config.DurText(d) }

// fmtNum formats a count or rate with k/M suffixes: "12", "3.4", "12.3k".
func fmtNum(v model.Opt) string {
	if !v.OK {
		return missing
	}
	x := v.V
	a := math.Abs(x)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return missing
	case a >= 1e12:
		// no count or rate of an engine is this large: bounded (a 1e308
		// printed 309 digits), never widening a column
		return strings.Replace(fmt.Sprintf("%.1e", x), "e+", "e", 1)
	case a >= 1e9:
		return trimZero(fmt.Sprintf("%.1f", x/1e9)) + "G"
	case a >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", x/1e6)) + "M"
	case a >= 1e4:
		return trimZero(fmt.Sprintf("%.1f", x/1e3)) + "k"
	case a >= 100 || x == math.Trunc(x):
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

// fmtPct formats a 0–1 ratio as a percentage; one past 100% (an engine's
// bad ratio: KV 2.5) reads ">100%", never "250%".
func fmtPct(v model.Opt) string {
	if !v.OK || math.IsNaN(v.V) || math.IsInf(v.V, 0) || v.V < 0 {
		return missing
	}
	p := v.V * 100
	if p > 100.5 {
		return ">100%"
	}
	if p > 0 && p < 10 {
		return trimZero(fmt.Sprintf("%.1f", p)) + "%"
	}
	return fmt.Sprintf("%.0f%%", p)
}

// fmtBytes formats a byte count in binary units: "71.2Gi".
func fmtBytes(v model.Opt) string {
	if !v.OK {
		return missing
	}
	x := v.V
	units := []string{"B", "Ki", "Mi", "Gi", "Ti"}
	i := 0
	for x >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	if i == 0 || x >= 100 {
		return fmt.Sprintf("%.0f%s", x, units[i])
	}
	return fmt.Sprintf("%.1f%s", x, units[i])
}

// fmtTokens formats a token count: "128k", "1.3M".
func fmtTokens(v model.Opt) string {
	if !v.OK {
		return missing
	}
	if v.V >= 1000 && v.V < 1e4 {
		return trimZero(fmt.Sprintf("%.1f", v.V/1000)) + "k"
	}
	return fmtNum(v)
}

func sortStrings(s []string) []string { sort.Strings(s); return s }

// clip cuts a string to at most w cells with an ellipsis. A styled string
// is measured and cut by its visible cells: counting its escape codes cut
// a faint line 11 cells early (the runs view lost "where the" of its
// latencies note) and could split an escape code in two.
func clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if strings.ContainsRune(s, '\x1b') {
		if ansi.StringWidth(s) <= w {
			return s
		}
		return ansi.Truncate(s, w, "…")
	}
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w == 1 {
		return "…"
	}
	return string(r[:w-1]) + "…"
}

// clipWords is clip that, when it cuts, cuts after a whole word: "(2.5 s of
// 2…" read as a number. It keeps a cut inside the word when the last
// space is far back (a long URL).
func clipWords(s string, w int) string {
	c := clip(s, w)
	if c == s || w < 12 {
		return c
	}
	r := []rune(s)[:w-1]
	if r[len(r)-1] != ' ' && []rune(s)[w-1] != ' ' { // the cut falls inside a word
		i := len(r) - 1
		for i > 0 && r[i] != ' ' {
			i--
		}
		if i < w*2/3 {
			return c
		}
		r = r[:i]
	}
	return strings.TrimRight(string(r), " ,;:(") + "…"
}

// optOf reads a gauge-like float that may be absent.
func optOf(v float64, ok bool) model.Opt {
	if !ok {
		return model.None
	}
	return model.Some(v)
}
