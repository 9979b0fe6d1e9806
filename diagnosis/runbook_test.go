package diagnosis

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// docs/runbook.md names findings as "rule `id`" or "rules `a`, `b` and
// `c`": each must be a finding id that still exists, and the page must
// name most of them.
func TestRunbookNamesLiveRules(t *testing.T) {
	b, err := os.ReadFile("../docs/runbook.md")
	if err != nil {
		t.Fatal(err)
	}
	list := regexp.MustCompile("rules? ((?:`[^`]+`(?:, | and | or |/)?)+)")
	item := regexp.MustCompile("`([^`]+)`")
	ids := FindingIDs()
	named := map[string]bool{}
	for _, m := range list.FindAllStringSubmatch(string(b), -1) {
		for _, it := range item.FindAllStringSubmatch(m[1], -1) {
			id := it[1]
			named[id] = true
			if !slices.Contains(ids, id) {
				t.Errorf("docs/runbook.md names rule %q, which no longer exists", id)
			}
		}
	}
	if len(named) < 50 {
		t.Errorf("the runbook names only %d rules", len(named))
	}
	var unnamed []string
	for _, id := range ids {
		if !named[id] {
			unnamed = append(unnamed, id)
		}
	}
	// Rules the runbook does not name are listed so a new rule gets its
	// question; the catch-all ids need none.
	for _, id := range unnamed {
		if id != "log_events" && id != "probe" && id != "itl_high" {
			t.Errorf("rule %s answers no question in docs/runbook.md", id)
		}
	}
}
