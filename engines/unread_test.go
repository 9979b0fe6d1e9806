package engines

import (
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// What the scrape's parser skips is read nowhere: each family a Spec lists
// in Unread is spelled in engines/ only there (no metric table, formula or
// rule names it, nor its _sum, _count or _bucket), and the families the
// client libraries write (Unread's own rule) are none that engines/ names.
// A family that comes to be read is taken out of Unread, never parsed
// around: this test fails until it is.
func TestUnreadIsReadNowhere(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	spelled := map[string]int{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "unread.go" {
			continue
		}
		for _, s := range literals(t, fset, f) {
			for _, n := range nameTok.FindAllString(s, -1) {
				for _, suffix := range []string{"_sum", "_count", "_bucket"} {
					n = strings.TrimSuffix(n, suffix)
				}
				spelled[n]++
			}
		}
	}
	listed := 0
	for _, s := range All() {
		for _, u := range s.Unread {
			listed++
			if spelled[u] != 1 {
				t.Errorf("%s lists %s as unread, but engines/ spells it %d times: it is read (take it out of Unread)", s.Name, u, spelled[u])
			}
			if !Unread(s, u) || Unread(nil, u) && !strings.HasSuffix(u, "_created") {
				t.Errorf("Unread(%s, %s) is not what its list says", s.Name, u)
			}
		}
	}
	if listed == 0 {
		t.Fatal("no Spec lists an unread family: the test reads nothing")
	}
	for n := range spelled {
		if Unread(nil, n) && strings.Contains(n, "_") {
			t.Errorf("engines/ spells %s, which Unread skips on every endpoint", n)
		}
	}
	for _, n := range []string{ProcessStart, "vllm:num_requests_running", "sglang:token_usage"} {
		if Unread(nil, n) || Unread(&VLLM, n) {
			t.Errorf("%s is read, but Unread skips it", n)
		}
	}
	for _, n := range []string{"python_gc_objects_collected_total", "python_info", "process_cpu_seconds_total", "vllm:request_success_created"} {
		if !Unread(nil, n) {
			t.Errorf("%s is read nowhere, but Unread parses it", n)
		}
	}
}
