package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// Fuzz targets: `make fuzz` runs each for FUZZTIME, CI for a few seconds.
// Seeds are the real captures in testdata (and the repo's testdata/engines).

func addFiles(f *testing.F, globs ...string) {
	f.Helper()
	n := 0
	for _, g := range globs {
		paths, _ := filepath.Glob(g)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
			n++
		}
	}
	if n == 0 {
		f.Fatalf("no seed files in %v", globs)
	}
}

var promSeeds = []string{"testdata/*.txt", "../../testdata/engines/*metrics*.txt"}

// promMappings are every Prometheus adapter's mapping.
var promMappings = map[string]func(families, meta) []model.Sample{
	"vllm": mapVLLM, "sglang": mapSGLang, "tgi": mapTGI, "llamacpp": mapLlamaCpp, "trtllm": mapTRTLLM, "triton": mapTriton,
}

// checkSample fails on a value no engine can mean, which the series-level
// rejection must have kept out of every adapter's output.
func checkSample(t *testing.T, who string, s model.Sample) {
	t.Helper()
	for g, v := range s.Gauges {
		if !model.Plausible(v) {
			t.Fatalf("%s: gauge %s = %v", who, g, v)
		}
	}
	for c, v := range s.Counters {
		if !model.Plausible(v) {
			t.Fatalf("%s: counter %s = %v", who, c, v)
		}
	}
	for r, v := range s.FinishReasons {
		if !model.Plausible(v) {
			t.Fatalf("%s: finish reason %q = %v", who, r, v)
		}
	}
	for l, h := range s.Latencies {
		if !model.PlausibleHist(h) {
			t.Fatalf("%s: latency %s = %+v", who, l, h)
		}
	}
}

// FuzzParseProm: the parser never panics; what it accepts, after the caps
// and the rejection of implausible series, holds only plausible values and
// at most maxSeries series.
func FuzzParseProm(f *testing.F) {
	addFiles(f, promSeeds...)
	f.Add([]byte("x{a=\"\x1b]0;t\x07\"} -5\nx_bucket{le=\"+Inf\"} NaN\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		fams, err := parseProm(body)
		if err != nil {
			return
		}
		limitSeries(fams, maxSeries, maxLabelValues)
		rejectImplausible(fams)
		n := 0
		for name, fam := range fams {
			for _, m := range fam.Metric {
				n++
				if v, bad := implausible(m); bad {
					t.Fatalf("%s kept with %s", name, v)
				}
			}
		}
		if n > maxSeries {
			t.Fatalf("%d series kept", n)
		}
	})
}

// FuzzAdapterMapping: every Prometheus adapter maps any parsed scrape
// without panicking, and no adapter turns plausible series into an
// implausible value (a sum that overflows, a ratio of zeros…).
func FuzzAdapterMapping(f *testing.F) {
	addFiles(f, promSeeds...)
	f.Fuzz(func(t *testing.T, body []byte) {
		fams, err := parseProm(body)
		if err != nil {
			return
		}
		limitSeries(fams, maxSeries, maxLabelValues)
		rejectImplausible(fams)
		for name, mapFn := range promMappings {
			for _, s := range mapFn(fams, testMeta("m")) {
				checkSample(t, name, s)
				if c := model.CleanScrape(model.Scrape{Samples: []model.Sample{s}}); model.Unsafe(c.Samples[0].Model) {
					t.Fatalf("%s: model %q unsafe after cleaning", name, c.Samples[0].Model)
				}
			}
		}
	})
}

// FuzzSlots: any /slots answer gives a KV usage that is a fraction, and a
// count of decoded tokens that is not negative.
func FuzzSlots(f *testing.F) {
	addFiles(f, "testdata/llamacpp_slots.json", "../../testdata/engines/*slots*.json")
	f.Add([]byte(`[{"n_ctx":-1,"is_processing":true,"n_prompt_tokens":-5,"next_token":{"n_decoded":-3}}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		slots := parseSlots(body)
		s := model.NewSample("e", "m", t0, model.FromScrape)
		applySlots(&s, slots)
		checkSample(t, "slots", s)
		if v, ok := s.Gauges[model.KVUsage]; ok && v > 1 {
			t.Fatalf("KV usage %v from %s", v, body)
		}
		if sum, known := decodedInFlight(slots); known && !model.Plausible(sum) {
			t.Fatalf("decoded in flight %v", sum)
		}
	})
}

// FuzzOllama: any /api/ps + /api/tags answer gives models whose context is
// not negative, whose facts are safe to print once cleaned, and samples
// with plausible values.
func FuzzOllama(f *testing.F) {
	ps, _ := os.ReadFile("testdata/ollama/api_ps.json")
	tags, _ := os.ReadFile("testdata/ollama/api_tags.json")
	real, _ := os.ReadFile("../../testdata/engines/ollama-0.17.4-api-ps.json")
	if len(ps) == 0 || len(tags) == 0 || len(real) == 0 {
		f.Fatal("missing Ollama captures")
	}
	f.Add(ps, tags)
	f.Add(real, []byte{})
	f.Add([]byte(`{"models":[{"name":"x\u001b[2J","size":-5,"size_vram":-7,"context_length":-1}]}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, psBody, tagsBody []byte) {
		models, err := probe.ParseOllama(psBody, tagsBody)
		if err != nil {
			return
		}
		id := model.CleanIdentity(model.Identity{Models: models})
		for _, m := range id.Models {
			if m.MaxContext < 0 {
				t.Fatalf("model %q context %d", m.ID, m.MaxContext)
			}
			for k, v := range m.Extra {
				if model.Unsafe(k) || model.Unsafe(v) || model.Unsafe(m.ID) {
					t.Fatalf("unsafe after cleaning: %q %q=%q", m.ID, k, v)
				}
				if (k == "size" || k == "size_vram" || k == "vram_ratio") && len(v) > 0 && v[0] == '-' {
					t.Fatalf("%s = %s", k, v)
				}
			}
		}
		for _, s := range ollamaSamples(models, testMeta("")) {
			checkSample(t, "ollama", s)
		}
	})
}
