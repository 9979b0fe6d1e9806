package exporter

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// serve starts a fake engine answering body on /metrics (nil: its fixture).
func serve(t *testing.T, eng model.Engine, body []byte) (*enginetest.Fake, string) {
	t.Helper()
	f := enginetest.New(eng)
	if body != nil {
		f.SetMetrics(body)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// feed scrapes url with the real adapter and applies the scrape to mon as
// endpoint id at time at (the core's clock is the scrapes' clock).
func feed(t *testing.T, mon *core.Monitor, eng model.Engine, url, id string, at time.Time) {
	t.Helper()
	sc := engine.ScrapeOnce(context.Background(), engine.Config{URL: url, Engine: eng, Timeout: 5 * time.Second})
	if sc.Err != "" {
		t.Fatalf("scrape %s: %s", url, sc.Err)
	}
	sc.Endpoint, sc.Time = id, at
	for i := range sc.Samples {
		sc.Samples[i].Endpoint, sc.Samples[i].Time = id, at
	}
	mon.Apply(sc)
}

// gather serves c through promhttp, as `llmtop export` does, and parses
// the text back with expfmt.
func gather(t *testing.T, c *Collector) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body.String())
	}
	body := rec.Body.String()
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return body, fams
}

// find returns the values of name's series whose labels include want.
func find(fams map[string]*dto.MetricFamily, name string, want map[string]string) []float64 {
	var out []float64
	mf := fams[name]
	if mf == nil {
		return nil
	}
	for _, m := range mf.GetMetric() {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.Gauge != nil:
			out = append(out, m.GetGauge().GetValue())
		case m.Counter != nil:
			out = append(out, m.GetCounter().GetValue())
		}
	}
	return out
}

// one returns the single value of name{want…}, failing otherwise.
func one(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	vs := find(fams, name, want)
	if len(vs) != 1 {
		t.Fatalf("%s%v: %d series, want 1", name, want, len(vs))
	}
	return vs[0]
}

// fixtureSum sums every series of name in an exposition text (the
// reference the exporter's numbers are checked against).
func fixtureSum(t *testing.T, body []byte, name string) float64 {
	t.Helper()
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	found := false
	for _, mf := range fams {
		for _, m := range mf.GetMetric() {
			full := mf.GetName()
			switch mf.GetType() {
			case dto.MetricType_GAUGE:
				if full == name {
					s, found = s+m.GetGauge().GetValue(), true
				}
			case dto.MetricType_COUNTER:
				if full == name || full+"_total" == name {
					s, found = s+m.GetCounter().GetValue(), true
				}
			case dto.MetricType_UNTYPED:
				if full == name {
					s, found = s+m.GetUntyped().GetValue(), true
				}
			}
		}
	}
	if !found {
		t.Fatalf("%s not in the capture", name)
	}
	return s
}

// doubled returns an exposition text with every cumulative value (counters,
// histogram buckets, counts and sums) doubled: a second scrape as if the
// engine had done as much again since the first.
func doubled(body []byte) []byte {
	var b strings.Builder
	for _, line := range strings.Split(string(body), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			b.WriteString(line + "\n")
			continue
		}
		name := line[:i]
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name = name[:j]
		}
		cumulative := strings.HasSuffix(name, "_total") || strings.HasSuffix(name, "_bucket") ||
			strings.HasSuffix(name, "_count") || strings.HasSuffix(name, "_sum")
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if !cumulative || err != nil || strings.HasSuffix(name, "_created") {
			b.WriteString(line + "\n")
			continue
		}
		fmt.Fprintf(&b, "%s %g\n", line[:i], 2*v)
	}
	return []byte(b.String())
}

// realCapture reads a capture from a real engine (testdata/engines, with
// its provenance in that folder's README).
func realCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "engines", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
