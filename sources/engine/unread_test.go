package engine

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// captures are the real engines' /metrics llmtop has, by engine: the
// fixtures in testdata, the shared fixtures where present, the real
// llama-server recording and the captures others recorded
// (testdata/engines/README.md).
func captures() map[model.Engine][]string {
	shared := "/work/shared/fixtures/metrics"
	real := func(names ...string) (out []string) {
		for _, n := range names {
			out = append(out, filepath.Join("..", "..", "testdata", "engines", n))
		}
		return out
	}
	return map[model.Engine][]string{
		model.VLLM:         append([]string{filepath.Join(enginetest.Dir(), "vllm.txt"), filepath.Join(shared, "vllm.txt")}, real(ddVLLMV0, ddVLLMMerged)...),
		model.SGLang:       append([]string{filepath.Join(enginetest.Dir(), "sglang.txt"), filepath.Join(shared, "sglang.txt")}, real(ddSGLang, sglangDocs)...),
		model.TGI:          append([]string{filepath.Join(enginetest.Dir(), "tgi.txt"), filepath.Join(shared, "tgi.txt")}, real(ddTGI)...),
		model.LlamaCpp:     {filepath.Join(enginetest.Dir(), "llamacpp.txt"), real(realLlamaMetrics)[0]},
		model.TRTLLM:       {filepath.Join(enginetest.Dir(), "trtllm.txt"), filepath.Join(shared, "trtllm.txt")},
		model.Triton:       {filepath.Join(enginetest.Dir(), "triton.txt")},
		engines.RayServeID: real(ddRay),
		engines.NIMID:      real(ddNIM),
	}
}

// Every real /metrics capture in testdata/engines is among captures(), so
// the tests that read them all (the skipping parser's, the adapters'
// table) see a new one.
func TestCapturesListsEveryRecording(t *testing.T) {
	listed := map[string]bool{}
	for _, ps := range captures() {
		for _, p := range ps {
			listed[filepath.Base(p)] = true
		}
	}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "engines", "*metrics*.txt"))
	if len(paths) < 7 {
		t.Fatalf("only %d recordings: %v", len(paths), paths)
	}
	for _, p := range paths {
		if !listed[filepath.Base(p)] {
			t.Errorf("%s is not in captures()", filepath.Base(p))
		}
	}
}

// read is what a scrape takes from a parse: the adapter's samples (with
// the process start), the endpoint's role and P/D role, and the notes of
// the limits.
type read struct {
	Samples      []model.Sample
	Role, Why    string
	PD           model.PDRole
	PDFrom       string
	Limit, Wrong []string
}

func readAll(f families, mapFn func(families, meta) []model.Sample) read {
	var r read
	r.Limit = limitSeries(f, maxSeries, maxLabelValues)
	r.Wrong = rejectImplausible(f)
	ro := classifyRole(f)
	r.Role, r.Why = string(ro.Role), ro.Why
	r.Samples = mapFn(f, testMeta(""))
	addProcessStart(f, r.Samples)
	r.PD, r.PDFrom = pdRole(f)
	return r
}

// Issue 33: the parser skips the samples of the families llmtop reads
// nowhere (engines.Unread), and on every real capture what is read is the
// same: each family left is the full parser's, and the samples, the
// endpoint's role, its P/D role and the limits' notes are equal. On vLLM
// it skips: the client library's own families, the _created timestamps and
// vLLM's unread histograms are 140 of the capture's 376 sample lines.
func TestSkippingParserReadsWhatTheFullOneDoes(t *testing.T) {
	all := captures()
	for eng, paths := range all {
		spec := engines.Of(eng)
		for _, p := range paths {
			body, err := os.ReadFile(p)
			if os.IsNotExist(err) && strings.HasPrefix(p, "/work/shared/") {
				continue // the shared fixtures live outside the repository
			}
			if err != nil {
				t.Fatal(err)
			}
			body = asServed(body)
			name := string(eng) + " " + filepath.Base(p)
			full, err := parseProm(body)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			skipped, err := parsePromSkip(body, unreadBy(spec))
			if err != nil {
				t.Fatalf("%s skipping: %v", name, err)
			}
			leftOut := 0
			for n, f := range full {
				g, ok := skipped[n]
				switch {
				case !ok && !engines.Unread(spec, n):
					t.Errorf("%s: %s is read but the skipping parser left it out", name, n)
				case ok && engines.Unread(spec, n):
					t.Errorf("%s: %s is read nowhere but was parsed", name, n)
				case ok && !reflect.DeepEqual(f, g):
					t.Errorf("%s: %s parsed differently when skipping:\n%v\n%v", name, n, f, g)
				case !ok:
					leftOut++
				}
			}
			if eng == model.VLLM && (leftOut == 0 || filepath.Base(p) == "vllm.txt" && leftOut < 30) {
				t.Errorf("%s: %d families skipped, want the unread ones (about 50 on vllm.txt)", name, leftOut)
			}
			mapFn := promMappers[eng]
			if mapFn == nil {
				t.Fatalf("%s: no adapter", name)
			}
			if a, b := readAll(full, mapFn), readAll(skipped, mapFn); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: what the scrape reads differs when skipping:\nfull %+v\nskip %+v", name, a, b)
			}
		}
	}
}

// The fast parser's fallback (expfmt, for a body outside its shape) leaves
// out the same families.
func TestSkippingAfterTheFallback(t *testing.T) {
	body := []byte(`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 1
# TYPE vllm:request_params_n histogram
vllm:request_params_n_bucket{le="1.0",model_name="m"} 3
vllm:request_params_n_bucket{le="+Inf",model_name="m"} 3
vllm:request_params_n_sum{model_name="m"} 3
vllm:request_params_n_count{model_name="m"} 3
# TYPE process_open_fds gauge
process_open_fds 12
{"quoted.name"} 1
`)
	if _, ok := fastParse(body); ok {
		t.Fatal("the body was meant to make the fast parser fall back to expfmt")
	}
	f, err := parsePromSkip(body, unreadBy(&engines.VLLM))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f["vllm:num_requests_running"]; !ok || f["vllm:request_params_n"] != nil || f["process_open_fds"] != nil {
		t.Fatalf("families after the fallback: %v", keys(f))
	}
}

func keys(f families) []string {
	var out []string
	for n := range f {
		out = append(out, n)
	}
	return out
}
