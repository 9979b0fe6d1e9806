package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/llmtop/llmtop/sources/bench"
)

// progressLine redraws one status line on stderr while `llmtop bench` runs —
// only when stderr is a terminal, so pipes and logs stay clean.
type progressLine struct {
	w    io.Writer
	on   bool
	last int
}

func newProgressLine(w io.Writer) *progressLine {
	f, ok := w.(*os.File)
	on := false
	if ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progressLine{w: w, on: on}
}

func (p *progressLine) show(prefix string, pr bench.Progress) {
	if !p.on {
		return
	}
	s := formatProgress(prefix, pr)
	pad := max(p.last-len(s), 0)
	fmt.Fprintf(p.w, "\r%s%s", s, strings.Repeat(" ", pad))
	p.last = len(s)
}

func (p *progressLine) done() {
	if p.on && p.last > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.last))
		p.last = 0
	}
}

// formatProgress is the status line: a bar, counts, running percentiles.
func formatProgress(prefix string, pr bench.Progress) string {
	const width = 20
	if pr.Warmup {
		return strings.TrimSpace(fmt.Sprintf("%s warming up: %d sent", prefix, pr.Sent))
	}
	n := int(pr.Fraction() * width)
	bar := strings.Repeat("#", n) + strings.Repeat(".", width-n)
	ms := func(label string, p50, p99 interface{ Or(float64) float64 }, ok bool) string {
		if !ok {
			return label + " --"
		}
		return fmt.Sprintf("%s p50 %.1f p99 %.1f ms", label, p50.Or(0), p99.Or(0))
	}
	return strings.TrimSpace(fmt.Sprintf("%s [%s] %s  done %d  failed %d  in flight %d  %s  %s", prefix, bar,
		pr.Elapsed.Truncate(100*time.Millisecond), pr.Completed, pr.Failed, pr.InFlight,
		ms("TTFT", pr.MedianTTFT, pr.P99TTFT, pr.MedianTTFT.OK), ms("TPOT", pr.MedianTPOT, pr.P99TPOT, pr.MedianTPOT.OK)))
}
