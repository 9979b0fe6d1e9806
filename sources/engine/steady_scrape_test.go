package engine

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// A steady scrape reuses what the last one built (strings, the sizes of its
// slabs and maps, the parser's scratch): whatever the engine changes between
// two scrapes, a session's scrape reads what a fresh session reads from the
// same body. Each body here follows the one before it on one session: every
// value changed, a series gone, a model added, the KV gauge under its old
// name (an upgrade or a downgrade renames it), then the capture again.
func TestSteadyScrapeReadsWhatAFreshOneReads(t *testing.T) {
	raw := enginetest.Fixture("vllm.txt")
	value := regexp.MustCompile(`(?m)^([a-z_:]+(?:\{[^}]*\})?) ([0-9.e+-]+)$`)
	changed := value.ReplaceAllFunc(raw, func(l []byte) []byte {
		m := value.FindSubmatch(l)
		v, err := strconv.ParseFloat(string(m[2]), 64)
		if err != nil {
			return l
		}
		return fmt.Appendf(nil, "%s %v", m[1], 2*v+1) // buckets stay cumulative
	})
	ttft := regexp.MustCompile(`(?m)^(# [A-Z]+ )?vllm:time_to_first_token_seconds.*\n`)
	gone := ttft.ReplaceAll(changed, nil)
	added := bytes.Replace(gone, []byte("vllm:num_requests_running{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 75\n"),
		[]byte("vllm:num_requests_running{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 75\nvllm:num_requests_running{engine=\"0\",model_name=\"other\"} 3\n"), 1)
	if bytes.Equal(added, gone) {
		t.Fatal("the running gauge's line was not found to add a model beside it")
	}
	renamed := bytes.ReplaceAll(raw, []byte("vllm:kv_cache_usage_perc"), []byte("vllm:gpu_cache_usage_perc"))
	bodies := []struct {
		name string
		body []byte
		// want, where set, checks the first sample
		want func(model.Sample) string
	}{
		{"the capture", raw, func(s model.Sample) string {
			return gauge(s, model.Running, 37)
		}},
		{"every value changed", changed, func(s model.Sample) string {
			if h := s.Latencies[model.TTFT]; h.Count == 0 {
				return "no TTFT histogram"
			}
			return gauge(s, model.Running, 75)
		}},
		{"a histogram gone", gone, func(s model.Sample) string {
			if _, ok := s.Latencies[model.TTFT]; ok {
				return "a TTFT histogram the body no longer has"
			}
			return ""
		}},
		{"a model added", added, nil},
		{"the KV gauge's old name", renamed, func(s model.Sample) string { return gauge(s, model.KVUsage, 0.8123) }},
		{"the capture again", raw, func(s model.Sample) string { return gauge(s, model.KVUsage, 0.8123) }},
	}
	fake := enginetest.New(model.VLLM)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	steady := newSession(Config{URL: srv.URL})
	ctx := context.Background()
	for _, b := range bodies {
		fake.SetMetrics(b.body)
		got := steady.scrape(ctx)
		fresh := newSession(Config{URL: srv.URL}).scrape(ctx)
		if got.Err != "" || fresh.Err != "" {
			t.Fatalf("%s: %q, fresh %q", b.name, got.Err, fresh.Err)
		}
		if len(got.Samples) == 0 || len(got.Samples) != len(fresh.Samples) {
			t.Fatalf("%s: %d samples, a fresh session %d", b.name, len(got.Samples), len(fresh.Samples))
		}
		for i := range got.Samples {
			g, f := got.Samples[i], fresh.Samples[i]
			g.Time, f.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(g, f) {
				t.Errorf("%s: sample %d differs from a fresh session's:\n%+v\n%+v", b.name, i, g, f)
			}
		}
		if b.want != nil {
			if why := b.want(got.Samples[0]); why != "" {
				t.Errorf("%s: %s", b.name, why)
			}
		}
	}
}

func gauge(s model.Sample, g model.Gauge, want float64) string {
	if v, ok := s.Gauges[g]; !ok || v != want {
		return fmt.Sprintf("%s %v (%v), want %v", g, v, ok, want)
	}
	return ""
}

// A steady scrape of the vLLM capture allocates a few hundred objects,
// the loopback server's included (891 before its parse kept its slabs' and
// maps' sizes, the family of one model was shared instead of copied and
// the cleaning compared label sets in place). The bound leaves room for the
// net/http client's own; the benchmark says the figure
// (BenchmarkSteadyScrape).
func TestSteadyScrapeAllocatesLittle(t *testing.T) {
	srv := httptest.NewServer(enginetest.New(model.VLLM))
	t.Cleanup(srv.Close)
	s := newSession(Config{URL: srv.URL})
	ctx := context.Background()
	for range 3 {
		if sc := s.scrape(ctx); sc.Err != "" {
			t.Fatal(sc.Err)
		}
	}
	a := testing.AllocsPerRun(20, func() { s.scrape(ctx) })
	t.Logf("%.0f allocations a steady scrape", a)
	if a > 350 {
		t.Errorf("a steady scrape allocates %.0f objects, want at most 350", a)
	}
}

// byModel hands a family whose series all name one model to that model as
// it is, and still splits a family that names several.
func TestByModelSharesAOneModelFamily(t *testing.T) {
	fams, err := parseProm([]byte(`# TYPE a gauge
a{model_name="m"} 1
a{model_name="m",engine="1"} 2
# TYPE b gauge
b{model_name="m"} 3
b{model_name="n"} 4
# TYPE c gauge
c 5
`))
	if err != nil {
		t.Fatal(err)
	}
	parts := byModel(fams, "model_name")
	if parts["m"]["a"] != fams["a"] {
		t.Error("a family of one model was copied")
	}
	if parts[""]["c"] != fams["c"] {
		t.Error("a family without the label was copied")
	}
	for v, want := range map[string]float64{"m": 3, "n": 4} {
		b := parts[v]["b"]
		if b == nil || len(b.Metric) != 1 || scalar(b.Metric[0]) != want {
			t.Errorf("model %s: family b is %v, want its one series %v", v, b, want)
		}
	}
	if _, ok := parts["n"]["a"]; ok {
		t.Error("model n got a family it has no series of")
	}
}

// dedupe keeps the last of series with one label set, in any label order,
// in a family of a few series (compared pair by pair) and of many (hashed).
func TestDedupeKeepsTheLastOfALabelSet(t *testing.T) {
	for _, n := range []int{3, 40} {
		var body bytes.Buffer
		body.WriteString("# TYPE g gauge\n")
		for i := range n {
			fmt.Fprintf(&body, "g{a=\"%d\",b=\"x\"} %d\n", i, i)
		}
		fmt.Fprintf(&body, "g{b=\"x\",a=\"1\"} 100\n") // a repeat, its labels the other way round
		fmt.Fprintf(&body, "g{a=\"1\",b=\"y\"} 7\n")   // not a repeat
		fams, err := parseProm(body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		ms := fams["g"].GetMetric()
		if len(ms) != n+1 {
			t.Fatalf("%d series: %d kept, want %d", n, len(ms), n+1)
		}
		var one []float64
		for _, m := range ms {
			if label(m, "a") == "1" {
				one = append(one, scalar(m))
			}
		}
		if !reflect.DeepEqual(one, []float64{100, 7}) {
			t.Errorf("%d series: a=1 series read %v, want the repeat's 100 and b=y's 7", n, one)
		}
	}
}

// Histogram buckets from series that share their bounds add up position
// by position; series whose bounds differ still merge by bound.
func TestHistMergesBucketsByBound(t *testing.T) {
	fams, err := parseProm([]byte(`# TYPE h histogram
h_bucket{e="0",le="1"} 1
h_bucket{e="0",le="2"} 2
h_bucket{e="0",le="+Inf"} 3
h_sum{e="0"} 3
h_count{e="0"} 3
h_bucket{e="1",le="1"} 10
h_bucket{e="1",le="2"} 20
h_bucket{e="1",le="+Inf"} 30
h_sum{e="1"} 30
h_count{e="1"} 30
h_bucket{e="2",le="0.5"} 100
h_bucket{e="2",le="2"} 200
h_sum{e="2"} 200
h_count{e="2"} 300
`))
	if err != nil {
		t.Fatal(err)
	}
	h, ok := view{fams: fams}.hist("h")
	if !ok {
		t.Fatal("no histogram")
	}
	want := []model.Bucket{{UpperBound: 0.5, Count: 100}, {UpperBound: 1, Count: 11}, {UpperBound: 2, Count: 222}, {UpperBound: math.Inf(1), Count: 333}}
	if !reflect.DeepEqual(h.Buckets, want) || h.Count != 333 {
		t.Errorf("merged %v (count %v), want %v", h.Buckets, h.Count, want)
	}
	// thousands of distinct bounds merge by the index, not by scanning
	var ms []*dto.Metric
	for s := range 2 {
		var hb dto.Histogram
		for i := range 200 {
			ub, c := float64(i*2+s), uint64(i)
			hb.Bucket = append(hb.Bucket, &dto.Bucket{UpperBound: &ub, CumulativeCount: &c})
		}
		cnt, sum := uint64(200), 1.0
		hb.SampleCount, hb.SampleSum = &cnt, &sum
		ms = append(ms, &dto.Metric{Histogram: &hb})
	}
	name := "x"
	h, _ = view{fams: families{"x": {Name: &name, Metric: ms}}}.hist("x")
	if len(h.Buckets) != 401 { // 400 bounds and +Inf
		t.Errorf("%d buckets, want 401", len(h.Buckets))
	}
}

// A remembered line is read again only as its family reads it now: the
// same heads under another TYPE, and a _count that becomes a family of its
// own, read as a fresh parse reads them.
func TestRememberedLinesFollowTheirFamily(t *testing.T) {
	bodies := []string{
		"# TYPE x histogram\nx_bucket{a=\"1\",le=\"1\"} 1\nx_bucket{a=\"1\",le=\"+Inf\"} 2\nx_sum{a=\"1\"} 3\nx_count{a=\"1\"} 2\n# TYPE g gauge\ng{a=\"1\"} 5\n",
		"# TYPE x_count counter\nx_count{a=\"1\"} 7\n# TYPE x_bucket gauge\nx_bucket{a=\"1\",le=\"1\"} 1\n# TYPE g counter\ng{a=\"1\"} 6\n",
		"# TYPE x summary\nx{a=\"1\",quantile=\"0.5\"} 1\nx_sum{a=\"1\"} 3\nx_count{a=\"1\"} 2\ng{a=\"1\"} 7\n",
		"# TYPE x histogram\nx_bucket{a=\"1\",le=\"1\"} 4\nx_bucket{a=\"1\",le=\"+Inf\"} 5\nx_sum{a=\"1\"} 6\nx_count{a=\"1\"} 5\n# TYPE g gauge\ng{a=\"1\"} 8\n",
	}
	in := newInterner()
	for i, b := range bodies {
		got, ok := fastParseIn([]byte(b), nil, in)
		want, wok := fastParse([]byte(b))
		if ok != wok {
			t.Fatalf("body %d: remembered parse ok %v, fresh %v", i, ok, wok)
		}
		if famsText(got) != famsText(want) {
			t.Errorf("body %d: the remembered parse reads\n%s\na fresh one\n%s", i, famsText(got), famsText(want))
		}
	}
	if len(in.lines) == 0 {
		t.Error("no line remembered")
	}
}

// A steady parse reads each remembered line's value only: its labels are
// the last parse's (no label pair allocated), and a warm parse of the vLLM
// capture allocates less than one object a sample line.
func TestRememberedLinesShareTheirLabels(t *testing.T) {
	raw := enginetest.Fixture("vllm.txt")
	in := newInterner()
	first, _ := fastParseIn(raw, nil, in)
	second, ok := fastParseIn(raw, nil, in)
	if !ok {
		t.Fatal("fell back")
	}
	shared := 0
	for name, f := range second {
		for i, m := range f.Metric {
			if len(m.Label) > 0 && &m.Label[0] == &first[name].Metric[i].Label[0] {
				shared++
			}
		}
	}
	if shared == 0 {
		t.Error("no series shares its labels with the last parse's")
	}
	lines := bytes.Count(raw, []byte("\n")) - bytes.Count(raw, []byte("\n#"))
	a := testing.AllocsPerRun(5, func() { fastParseIn(raw, nil, in) })
	t.Logf("%d lines, %.0f allocations a warm parse, %d series share their labels", lines, a, shared)
	if a >= float64(lines) {
		t.Errorf("a warm parse of %d sample lines allocates %.0f objects", lines, a)
	}
}
