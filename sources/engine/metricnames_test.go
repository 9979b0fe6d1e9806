package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The adapters of the engines with a Prometheus exposition; each wrapping
// layer (Spec.Like: Ray Serve, KServe, NIM, SGLang's gateway) reads with its
// engine's.
var promMappers = func() map[model.Engine]func(families, meta) []model.Sample {
	m := map[model.Engine]func(families, meta) []model.Sample{
		model.VLLM: mapVLLM, model.SGLang: mapSGLang, model.TGI: mapTGI,
		model.LlamaCpp: mapLlamaCpp, model.TRTLLM: mapTRTLLM, model.Triton: mapTriton,
	}
	for _, s := range engines.All() {
		if s.Like != model.Unknown {
			m[s.ID] = reexported(s, engines.Of(s.Like), m[s.Like])
		}
	}
	return m
}()

// companions: a metric the adapter reads only beside another (vLLM's
// prefix hits beside the queries counter of the same generation, accepted
// speculative tokens beside drafted ones).
var companions = map[model.Engine]map[string]string{
	model.VLLM: {string(model.PrefixHits): string(model.PrefixQueries), string(model.SpecAcceptTokens): string(model.SpecDraftTokens),
		model.SpecAcceptByPos: string(model.SpecDrafts)},
	engines.RayServeID: {string(model.PrefixHits): string(model.PrefixQueries), string(model.SpecAcceptTokens): string(model.SpecDraftTokens),
		model.SpecAcceptByPos: string(model.SpecDrafts)},
	model.LlamaCpp: {string(model.SpecAcceptTokens): string(model.SpecDraftTokens), model.SpecAcceptByPos: string(model.SpecDrafts)},
	model.TRTLLM:   {string(model.SpecAcceptTokens): string(model.SpecDraftTokens)},
}

// exposition writes one metric as the engine would: a histogram for a
// distribution, else a counter or gauge with one series.
func exposition(concept, name string) string {
	var lbl string
	switch concept {
	case model.FinishReasons:
		lbl = `{finished_reason="stop"}`
	case model.SpecAcceptByPos:
		lbl = `{position="0"}`
	}
	switch concept {
	case string(model.TTFT), string(model.TPOT), string(model.ITL), string(model.E2E), string(model.Queue), string(model.Prefill),
		string(model.Decode), string(model.PromptLen), string(model.OutputLen), string(model.StepTokens), string(model.KVTransfer),
		string(model.KVTransferBytes):
		return fmt.Sprintf("# TYPE %[1]s histogram\n%[1]s_bucket{le=\"0.1\"} 3\n%[1]s_bucket{le=\"+Inf\"} 4\n%[1]s_sum 0.5\n%[1]s_count 4\n", name)
	}
	typ := "gauge"
	if strings.HasSuffix(name, "_total") {
		typ = "counter"
	}
	return fmt.Sprintf("# TYPE %[1]s %[2]s\n%[1]s%[3]s 7\n", name, typ, lbl)
}

// Issue 14 item 8: every metric name the `e` overlay lists for an engine
// (engines.Metrics) is one the adapter reads, each older name alone
// too, and the adapter records exactly that name for the concept. A name
// changed in an adapter and not in the table (or the other way) fails here.
func TestEngineMetricsTableIsWhatAdaptersRead(t *testing.T) {
	checked := 0
	for _, sp := range engines.All() {
		eng, rows := sp.ID, sp.Metrics
		mapFn, ok := promMappers[eng]
		for _, row := range rows {
			if len(row.Names) > 0 && !ok {
				t.Errorf("%s %s: names listed for an engine with no Prometheus adapter", eng, row.Concept)
			}
			for i, name := range row.Names {
				body := exposition(row.Concept, name)
				comp := companions[eng]
				if sp.Like != model.Unknown {
					comp = companions[sp.Like]
				}
				if c, ok := comp[row.Concept]; ok {
					body += exposition(c, engines.MetricNames(eng, c)[i])
				}
				ss := mapFn(mustParse(t, []byte(body)), testMeta(""))
				if len(ss) != 1 || ss[0].From[row.Concept] != name {
					var got any = ss
					if len(ss) == 1 {
						got = ss[0].From
					}
					t.Errorf("%s %s: a scrape with only %s reads %v, want From[%s] = %s", eng, row.Concept, name, got, row.Concept, name)
				}
				checked++
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d names checked", checked)
	}
}

var engineLabel = regexp.MustCompile(`\{engine="[^"]*"\}$`)

// The other way: what an adapter records it read from the fixtures and the
// real llama-server recording is a name (or formula) the table lists for
// that concept, so `e` never leaves out the metric a finding cites.
func TestAdaptersReadOnlyWhatTheTableLists(t *testing.T) {
	files := captures()
	for eng, paths := range files {
		for _, p := range paths {
			body, err := os.ReadFile(p)
			if os.IsNotExist(err) && strings.HasPrefix(p, "/work/shared/") {
				continue // the shared fixtures live outside the repository
			}
			if err != nil {
				t.Fatal(err)
			}
			ss := promMappers[eng](mustParse(t, dropRepeatedMeta(asServed(body))), testMeta(""))
			recorded := 0
			for _, s := range ss {
				for concept, name := range s.From {
					recorded++
					row, ok := engines.MetricSourceOf(eng, concept)
					name = engineLabel.ReplaceAllString(name, "")
					if !ok || (!slices.Contains(row.Names, name) && !slices.Contains(row.Derived, name)) {
						t.Errorf("%s (%s): the adapter read %s from %s, which engines.Metrics does not list (%+v)", eng, filepath.Base(p), concept, name, row)
					}
				}
			}
			if recorded == 0 {
				t.Errorf("%s (%s): no metric recorded", eng, p)
			}
		}
	}
}
