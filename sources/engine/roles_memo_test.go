package engine

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/llmtop/llmtop/engines"
)

// A session's kept classification is classifyRole's answer, scrape after
// scrape, through engines that stay, routers and layers that come and go,
// names that change at the same count, an engine's reused names served as
// a router serves them (the same names, its labels), and a picker whose
// renamed families are counted once (what it counts is not the families).
func TestRoleMemoAnswersAsClassifyRole(t *testing.T) {
	vllm := fixture(t, "vllm.txt")
	lmcache := mustParse(t, routerFile(t, "lmcache-on-vllm-tutorial.txt"))
	router := mustParse(t, routerFile(t, "prodstack-router-a6c01db0.txt"))
	picker := mustParse(t, eppDualEmission(t)) // counts its renamed families once
	// vLLM with one family swapped for an LMCache family: the same count,
	// other names, LMCache beside it
	swapped := families{}
	for n, f := range vllm {
		swapped[n] = f
	}
	for n := range swapped {
		if !slices.Contains(engines.ProdStackRouter.Shadow.Names, n) {
			delete(swapped, n)
			break
		}
	}
	for n, f := range lmcache {
		if strings.HasPrefix(n, engines.LMCache.Prefixes[0]) {
			swapped[n] = f
			break
		}
	}
	// vLLM's names, its reused gauges labelled as the router labels them
	relabelled := families{}
	for n, f := range vllm {
		relabelled[n] = f
	}
	for _, n := range engines.ProdStackRouter.Shadow.Names {
		f, ok := vllm[n]
		if !ok {
			continue
		}
		g := proto.Clone(f).(*dto.MetricFamily)
		for _, m := range g.Metric {
			m.Label = []*dto.LabelPair{{Name: proto.String(engines.ProdStackServerLabel), Value: proto.String("http://10.0.0.11:8000")}}
		}
		relabelled[n] = g
	}
	steps := []struct {
		name string
		f    families
	}{
		{"vllm", vllm}, {"vllm again", fixture(t, "vllm.txt")}, {"sglang", fixture(t, "sglang.txt")},
		{"vllm", vllm}, {"vllm with LMCache swapped in", swapped}, {"vllm", vllm},
		{"vllm's names labelled as the router's", relabelled}, {"vllm", vllm},
		{"the router", router}, {"the router again", router}, {"vllm", vllm},
		{"lmcache beside vllm", lmcache}, {"lmcache beside vllm again", lmcache}, {"tgi", fixture(t, "tgi.txt")},
		{"the picker", picker}, {"the picker again", picker},
	}
	var m roleMemo
	kept := 0
	for _, s := range steps {
		was := m.ok
		got, want := m.classify(s.f), classifyRole(s.f)
		if was && m.ok && got.Why == m.r.Why {
			kept++
		}
		if reflect.ValueOf(got.Counted).Pointer() != reflect.ValueOf(want.Counted).Pointer() && !reflect.DeepEqual(got.Counted, want.Counted) {
			t.Fatalf("%s: counted families differ", s.name)
		}
		got.Counted, want.Counted = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: kept answer %+v, classifyRole's %+v", s.name, got, want)
		}
	}
	if kept == 0 {
		t.Fatal("no answer was kept")
	}
}
