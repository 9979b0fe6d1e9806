package tui

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/guptarohit/asciigraph"

	"github.com/llmtop/llmtop/model"
)

// linePlot draws what asciigraph draws with the options the charts use,
// line for line: series with gaps at the start, in the middle and at the
// end, flat ones, zeros, negative ones, steps, spikes, tiny and huge values, at every
// height the panes ask for.
func TestLinePlotIsAsciigraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 33))
	label := func(v float64) string { return fmt.Sprintf("%6s", fmtNum(model.Some(v))) }
	for i := 0; i < 5000; i++ {
		n := 1 + rng.IntN(120)
		scale := math.Pow(10, float64(rng.IntN(12)-6))
		s := make([]float64, n)
		for j := range s {
			switch k := rng.IntN(20); {
			case k == 0:
				s[j] = math.NaN()
			case k == 1:
				s[j] = 0
			case k < 4 && j > 0:
				s[j] = s[j-1] // flat
			case k == 4 && i%3 == 0:
				s[j] = -rng.Float64() * scale // (none of the charts', but the same)
			default:
				s[j] = rng.Float64() * scale
			}
		}
		if i%5 == 0 { // a window filling up: gaps on the left
			for j := range s[:rng.IntN(n)] {
				s[j] = math.NaN()
			}
		}
		if i%17 == 0 {
			for j := range s {
				s[j] = 0
			}
		}
		hi := 0.0
		for _, v := range s {
			if !math.IsNaN(v) {
				hi = max(hi, v)
			}
		}
		height := 1 + rng.IntN(16)
		upper := hi * (1 + rng.Float64())
		if i%7 == 0 {
			upper = 0
		}
		want := strings.Split(asciigraph.Plot(s, asciigraph.Height(height), asciigraph.LowerBound(0), asciigraph.UpperBound(upper),
			asciigraph.YAxisValueFormatter(label)), "\n")
		got := linePlot(s, height, upper, label)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("series %v height %d upper %v:\nlinePlot:\n%s\nasciigraph:\n%s", s, height, upper, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// BenchmarkLinePlot and BenchmarkAsciigraphPlot draw the throughput chart
// of a 200×60 monitor (55 columns, 16 rows) both ways.
func BenchmarkLinePlot(b *testing.B)       { benchPlot(b, linePlot) }
func BenchmarkAsciigraphPlot(b *testing.B) { benchPlot(b, asciigraphLines) }

func asciigraphLines(s []float64, height int, upper float64, label func(float64) string) []string {
	return strings.Split(asciigraph.Plot(s, asciigraph.Height(height), asciigraph.LowerBound(0), asciigraph.UpperBound(upper),
		asciigraph.YAxisValueFormatter(label)), "\n")
}

func benchPlot(b *testing.B, plot func([]float64, int, float64, func(float64) string) []string) {
	s := make([]float64, 55)
	for i := range s {
		s[i] = 400 + float64((i*37)%9)*100
	}
	label := func(v float64) string { return fmt.Sprintf("%6s", fmtNum(model.Some(v))) }
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = plot(s, 15, 1500, label)
	}
}
