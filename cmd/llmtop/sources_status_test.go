package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/session"
)

// The screen's sources line lists only the sources that read something:
// "prometheus ok" without --prometheus, "logs ok" with no log attached and
// "host ok" for an endpoint on another machine each claimed a reading
// nobody took.
func TestSourceStatusesListOnlyWhatRuns(t *testing.T) {
	for _, c := range []struct {
		name string
		env  session.Env
		want []string
	}{
		{"a remote endpoint, no log", session.Env{URLs: []string{"http://gpu1:8000"}}, []string{"engine", "gpu"}},
		{"a local endpoint, no log", session.Env{URLs: []string{"http://127.0.0.1:8080"}}, []string{"engine", "gpu", "host"}},
		{"a local endpoint and its log", session.Env{URLs: []string{"http://127.0.0.1:8080"}, Logs: []string{"-"}},
			[]string{"engine", "gpu", "host", "logs"}},
		{"the demo", session.Env{URLs: []string{"http://127.0.0.1:40000"}, SimLog: strings.NewReader("")},
			[]string{"engine", "gpu", "host", "logs"}},
	} {
		got := slices.Sorted(maps.Keys(sourceStatuses(sourcePlugins, &c.env)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: sources %v, want %v", c.name, got, c.want)
		}
	}
}
