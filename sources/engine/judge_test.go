package engine

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

const vllmModel = `model_name="meta-llama/Llama-3.1-8B-Instruct"`

// editVLLM returns testdata/vllm.txt with the lines holding old replaced by
// repl (several lines allowed) — the fixture as a proxy or another build
// would serve it.
func editVLLM(t *testing.T, edit func(lines []string) []string) families {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(enginetest.Fixture("vllm.txt")), "\n"), "\n")
	return mustParse(t, []byte(strings.Join(edit(lines), "\n")+"\n"))
}

// Issue 14 item 3: a total (no finished_reason) beside its parts is not
// added to them: requests are the parts' 1527, not 3054.
func TestTotalBesideItsPartsCountsOnce(t *testing.T) {
	f := editVLLM(t, func(lines []string) []string {
		var out []string
		for _, l := range lines {
			out = append(out, l)
			if strings.HasPrefix(l, `vllm:request_success_total{engine="0",finished_reason="repetition"`) {
				out = append(out, `vllm:request_success_total{engine="0",`+vllmModel+`} 1527.0`)
			}
			if strings.HasPrefix(l, `vllm:prompt_tokens_total{`) {
				// a total without the engine label beside engine 0's part
				out = append(out, `vllm:prompt_tokens_total{`+vllmModel+`} 1.405367e+06`)
			}
		}
		return out
	})
	s := only(t, mapVLLM(f, testMeta("")))
	if got := s.Counters[model.Requests]; got != 1443+80+4 {
		t.Errorf("requests = %v, want 1527 (the parts, not parts + total)", got)
	}
	if got := s.Counters[model.PromptTokens]; got != 1405367 {
		t.Errorf("prompt tokens = %v, want 1405367", got)
	}
	if _, ok := s.FinishReasons[""]; ok {
		t.Errorf("finish reasons have an empty key: %v", s.FinishReasons)
	}
	if s.FinishReasons["stop"] != 1443 {
		t.Errorf("finish reasons = %v", s.FinishReasons)
	}
}

// A total alone (no parts) is still read.
func TestTotalWithoutPartsIsKept(t *testing.T) {
	f := mustParse(t, []byte("# TYPE x counter\nx{a=\"1\"} 5\nx{a=\"2\",b=\"y\"} 3\nx{a=\"2\",b=\"z\"} 4\nx{a=\"2\"} 7\n"))
	got := map[string]float64{}
	for _, m := range f["x"].Metric {
		got[seriesLabels(m)] = scalar(m)
	}
	want := map[string]float64{`{a="1"}`: 5, `{a="2",b="y"}`: 3, `{a="2",b="z"}`: 4}
	if len(got) != len(want) {
		t.Fatalf("series = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("series = %v, want %v", got, want)
		}
	}
}

// Issue 14 item 4: finish reasons without a reason label are no "" key
// (which the screen drew as "finish 100%"); the requests still count.
func TestFinishReasonsWithoutLabel(t *testing.T) {
	f := editVLLM(t, func(lines []string) []string {
		var out []string
		for _, l := range lines {
			if strings.HasPrefix(l, "vllm:request_success_total{") {
				if strings.Contains(l, `finished_reason="stop"`) {
					out = append(out, `vllm:request_success_total{engine="0",`+vllmModel+`} 1527.0`)
				}
				continue
			}
			out = append(out, l)
		}
		return out
	})
	s := only(t, mapVLLM(f, testMeta("")))
	if got := s.Counters[model.Requests]; got != 1527 {
		t.Errorf("requests = %v, want 1527", got)
	}
	for r := range s.FinishReasons {
		if r == "" {
			t.Errorf("finish reasons have an empty key: %v", s.FinishReasons)
		}
	}
}

// The same for TGI: a failure without err is named as a failure.
func TestTGIFailureWithoutErrLabel(t *testing.T) {
	body := enginetest.Fixture("tgi.txt")
	var out [][]byte
	for _, l := range bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n")) {
		if bytes.HasPrefix(l, []byte("tgi_request_failure{")) {
			continue
		}
		out = append(out, l)
	}
	out = append(out, []byte("tgi_request_failure 3"))
	s := only(t, mapTGI(mustParse(t, append(bytes.Join(out, []byte("\n")), '\n')), testMeta("")))
	if _, ok := s.FinishReasons[""]; ok {
		t.Errorf("finish reasons have an empty key: %v", s.FinishReasons)
	}
	if s.Counters[model.RequestErrors] != 3 || s.FinishReasons["failure"] != 3 {
		t.Errorf("errors = %v, finish reasons = %v; want 3 failures", s.Counters[model.RequestErrors], s.FinishReasons)
	}
}

func TestTRTLLMFinishReasonsWithoutLabel(t *testing.T) {
	body := enginetest.Fixture("trtllm.txt")
	var out [][]byte
	for _, l := range bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n")) {
		if bytes.HasPrefix(l, []byte("trtllm_request_success_total{")) {
			continue
		}
		out = append(out, l)
	}
	out = append(out, []byte(`trtllm_request_success_total{engine_type="undefined",model_name="undefined"} 1200.0`))
	s := only(t, mapTRTLLM(mustParse(t, append(bytes.Join(out, []byte("\n")), '\n')), testMeta("")))
	if _, ok := s.FinishReasons[""]; ok {
		t.Errorf("finish reasons have an empty key: %v", s.FinishReasons)
	}
	if got := s.Counters[model.Requests]; got != 1200 {
		t.Errorf("requests = %v, want 1200", got)
	}
}

// Issue 14 item 2: a proxy that drops # HELP/# TYPE lines still serves
// histograms; they are recognised by their _bucket/_sum/_count shape.
func TestHistogramsWithoutTypeLines(t *testing.T) {
	f := editVLLM(t, func(lines []string) []string {
		var out []string
		for _, l := range lines {
			if !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
		return out
	})
	s := only(t, mapVLLM(f, testMeta("")))
	checkHist(t, s, model.TTFT, 1523, 816.7026573352582, 0.25, 399)
	checkHist(t, s, model.ITL, 20000, 683.0152644655192, 0, 0)
	checkHist(t, s, model.E2E, 1523, 9889.207700226514, 0, 0)
	if got := s.Counters[model.PromptTokens]; got != 1405367 {
		t.Errorf("prompt tokens = %v, want 1405367", got)
	}
	if got := s.Gauges[model.Running]; got != 37 {
		t.Errorf("running = %v, want 37", got)
	}
}

// Issue 31 item 11: an exporter that tags only some requests serves an
// untagged total of 7.2/s beside parts that add up to 2.8/s. The total is
// the number: its parts are dropped, not it.
func TestTotalWhosePartsDoNotAddUpIsKept(t *testing.T) {
	f := editVLLM(t, func(lines []string) []string {
		var out []string
		for _, l := range lines {
			out = append(out, l)
			if strings.HasPrefix(l, `vllm:request_success_total{engine="0",finished_reason="repetition"`) {
				// the parts (stop 1443, length 80, abort 0, repetition 4) say 1527
				out = append(out, `vllm:request_success_total{engine="0",`+vllmModel+`} 3927.0`)
			}
		}
		return out
	})
	s := only(t, mapVLLM(f, testMeta("")))
	if got := s.Counters[model.Requests]; got != 3927 {
		t.Errorf("requests = %v, want the total 3927 (the parts add up to only 1527)", got)
	}
}
