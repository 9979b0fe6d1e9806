package main

import (
	"testing"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/sources/logs"
)

// The diagnosis maps log events to fixes by the catalogue's ids; a renamed
// or deleted catalogue entry would silently orphan its fix.
func TestEveryDiagnosedEventKindIsInTheCatalogue(t *testing.T) {
	ids := map[string]bool{}
	for _, p := range logs.Catalogue {
		ids[p.ID] = true
	}
	kinds := diagnosis.EventKinds()
	if len(kinds) < 20 {
		t.Fatalf("only %d event kinds: %v", len(kinds), kinds)
	}
	for _, k := range kinds {
		if !ids[k] {
			t.Errorf("diagnosis maps log event %q, which the log catalogue (engines/: the engine files and runtimes.go) does not have", k)
		}
	}
}
