package diagnosis

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every id the rules assign in their source (f.ID = "…", ID: "…",
// queueFinding(e, ep, "…", the probe's add("…", …)) is one FindingIDs
// lists, and every sub-id listed is still assigned somewhere.
func TestFindingIDsCoverTheSource(t *testing.T) {
	assign := regexp.MustCompile(`(?:f\.ID(?:, f\.Title)? = |ID: +|Finding\(e, ep, |add\()"([a-z0-9_]+)"`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range assign.FindAllStringSubmatch(string(b), -1) {
			found[m[1]] = true
		}
	}
	ids := FindingIDs()
	for id := range found {
		if !slices.Contains(ids, id) {
			t.Errorf("%s is assigned in the source but FindingIDs does not list it (add it to subIDs)", id)
		}
	}
	for _, id := range subIDs {
		if !found[id] {
			t.Errorf("subIDs lists %s, which no rule assigns any more", id)
		}
	}
	if len(ids) < 60 {
		t.Errorf("only %d ids", len(ids))
	}
}
