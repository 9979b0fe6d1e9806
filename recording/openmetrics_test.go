package recording

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// The export is well-formed OpenMetrics: each family once and whole, each
// series in time order, histograms ending at +Inf with their count, # EOF
// last; what the engine or GPU did not give is absent, not 0.
func TestOpenMetricsShape(t *testing.T) {
	recs := allMessages()
	s2 := recs[0].Msg.(model.Scrape)
	s2.Time = at(9)
	s2.Samples = append([]model.Sample(nil), s2.Samples...)
	s2.Samples[0].Time = at(9)
	s2.Samples[0].Gauges = map[model.Gauge]float64{"running": 4, "nan": math.NaN()}
	dup := s2 // the same millisecond again: dropped
	recs = append(recs, Record{at(9), s2}, Record{at(9), dup})
	var out bytes.Buffer
	n, err := OpenMetrics(&out, Records(recs))
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.HasSuffix(text, "# EOF\n") || strings.Count(text, "# EOF") != 1 {
		t.Fatalf("no single # EOF at the end:\n%s", text)
	}
	seenFamily := map[string]bool{}
	var family string
	lastTS := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSuffix(text, "# EOF\n"), "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "# TYPE ") {
			family = strings.Fields(line)[2]
			if seenFamily[family] {
				t.Fatalf("family %s twice", family)
			}
			seenFamily[family] = true
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, family) {
			t.Fatalf("%q outside its family %s", line, family)
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("want name value timestamp: %q", line)
		}
		if f[1] == "NaN" {
			t.Fatalf("NaN exported: %q", line)
		}
		ts, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatalf("timestamp %q", line)
		}
		series := f[0]
		if ts < lastTS[series] || (ts == lastTS[series] && !strings.Contains(series, "_bucket")) {
			t.Fatalf("%s goes back in time or repeats: %q", series, line)
		}
		lastTS[series] = ts
	}
	for _, want := range []string{
		`llmtop_running{endpoint="http://a:8000",model="llama",source="scrape"} 3 ` + ts(at(1)),
		`llmtop_running{endpoint="http://a:8000",model="llama",source="scrape"} 4 ` + ts(at(9)),
		`llmtop_generation_tokens_total{endpoint="http://a:8000",model="llama",source="scrape"} 123456789012.25 `,
		`llmtop_ttft_seconds_bucket{endpoint="http://a:8000",model="llama",source="scrape",le="+Inf"} 7 `,
		`llmtop_ttft_seconds_count{endpoint="http://a:8000",model="llama",source="scrape"} 7 `,
		`llmtop_finished_requests_total{endpoint="http://a:8000",model="llama",source="scrape",reason="stop"} 9 `,
		`llmtop_running{endpoint="http://a:8000",source="log"} 1 `,
		`llmtop_scrape_up{endpoint="http://a:8000"} 0 ` + ts(at(2)),
		`llmtop_gpu_util_pct{gpu="0",name="H100"} 97 `,
		"# TYPE llmtop_tgi_ttft_seconds", // parts only: not exported, below
	} {
		if want == "# TYPE llmtop_tgi_ttft_seconds" {
			if strings.Contains(text, want) {
				t.Errorf("a composite histogram was exported")
			}
			continue
		}
		if !strings.Contains(text, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(text, "llmtop_gpu_power_w") || strings.Contains(text, "llmtop_weird") {
		t.Errorf("an absent or infinite value was exported:\n%s", text)
	}
	if c := strings.Count(text, `llmtop_running{endpoint="http://a:8000",model="llama"`); c != 2 {
		t.Errorf("the repeated scrape was written again (%d points)", c)
	}
	if n == 0 {
		t.Fatal("no points counted")
	}
}

func ts(t interface{ UnixMilli() int64 }) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}
