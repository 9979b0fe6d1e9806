package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// The demo's prefill pool read "1 of 2 prefill workers … idle while the
// other 1 are loaded".
func TestPoolStarvedTitleSaysTheOtherIs(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{member("http://p0", model.RolePrefill, 8, 6, 1.0), member("http://p1", model.RolePrefill, 0, 0, 0)}
	})
	f := open(rep, "pool_starved")
	if f == nil {
		t.Fatalf("pool_starved not open; findings %v", ids(rep.Findings))
	}
	if !strings.HasSuffix(f.Title, "idle while the other is loaded: p1") {
		t.Errorf("title %q", f.Title)
	}
}

// A llama-server started alone (llmtop run) was told "add a replica behind
// the router": there is no router, and the advice sent the reader looking
// for one.
func TestReplicasAdviceNamesNoRouterThatIsNotThere(t *testing.T) {
	for _, eng := range []model.Engine{model.LlamaCpp, model.VLLM} {
		a := replicas(ep(func(e *Endpoint) { e.Identity.Engine = eng }))
		if strings.Contains(a.Change, "the router") || !strings.Contains(a.Change, "a router") {
			t.Errorf("%s: %q", eng, a.Change)
		}
	}
}
