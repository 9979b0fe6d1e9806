package prometheus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Issue 26: the fleet source classifies its targets as the single-endpoint
// path does. The production-stack router serves vllm:num_requests_running
// labelled server, without model_name (its capture in testdata/routers):
// in a Prometheus beside its engines it is a router, never one more vLLM
// target; each engine's role label gives its prefill/decode role.
func TestFleetClassifiesARouterAndTheEnginesRoles(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	router := fakeEP{engine: "vllm:", labels: map[string]string{"job": "router", "instance": "10.0.9.1:8001",
		"server": "http://10.0.0.1:8000"}, values: map[string]float64{"gauge:running": 7}}
	prefill := vllmEP(1, "prod", "m", 0.2, 40, 0.3)
	prefill.labels[engines.KServeRoleLabel] = "prefill"
	decode := vllmEP(2, "prod", "m", 0.7, 0, 0.3)
	decode.labels[engines.SGLangEngineType] = "decode"
	plain := vllmEP(3, "prod", "m", 0.5, 0, 0.3)
	f.eps = []fakeEP{router, prefill, decode, plain}
	for _, e := range f.eps {
		f.up[e.labels["instance"]] = 1
	}
	s := newFake(t, f, Config{})
	r := s.Refresh(context.Background(), time.Now())
	got := map[string]model.Scrape{}
	for _, m := range r.Msgs {
		if sc, ok := m.(model.Scrape); ok {
			got[sc.Endpoint] = sc
		}
	}
	rt := got["http://10.0.9.1:8001"]
	if rt.OK() || len(rt.Samples) != 0 || !strings.Contains(rt.Err, engines.ProdStackRouter.Name) || rt.Identity.Engine == model.VLLM {
		t.Errorf("router target: engine %q err %q, %d samples: want it named a router, not read", rt.Identity.Engine, rt.Err, len(rt.Samples))
	}
	for ep, want := range map[string]model.PDRole{"http://10.0.0.1:8000": model.RolePrefill, "http://10.0.0.2:8000": model.RoleDecode, "http://10.0.0.3:8000": ""} {
		sc := got[ep]
		if !sc.OK() || sc.Identity.Role != want {
			t.Errorf("%s: ok %v role %q (from %q), want %q", ep, sc.OK(), sc.Identity.Role, sc.Identity.RoleFrom, want)
		}
	}
}

// The labels term groups by every label the classification reads, and the
// answer's decoder keeps each of them.
func TestRoleLabelsAreAskedAndDecoded(t *testing.T) {
	q := builder{f: familyOf(model.VLLM), window: "5m"}.stateQuery()
	for _, l := range roleLabels() {
		if !strings.Contains(q, l) {
			t.Errorf("labels term does not group by %s", l)
		}
		body := `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j","instance":"i:1","` + l + `":"x"},"value":[1,"1"]}]}}`
		lim := &refreshLimits{maxBytes: 1 << 20, maxTargets: 50, maxSeries: 200, admitted: map[tkey]bool{}, dropped: map[tkey]bool{}}
		a, err := decodeAnswer(strings.NewReader(body), lim, false)
		if err != nil || len(a.Rows) != 1 {
			t.Fatalf("%v, %d rows", err, len(a.Rows))
		}
		if a.Rows[0].labels.get(l) != "x" {
			t.Errorf("label %s not decoded", l)
		}
	}
}
