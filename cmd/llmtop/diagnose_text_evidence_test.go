package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/diagnosis"
)

// An evidence line derived from the lines above it has no source of its
// own: the text report printed it with an empty "()" after it.
func TestDiagnoseTextEvidenceWithoutSource(t *testing.T) {
	var b bytes.Buffer
	printFinding(&b, 1, diagnosis.Finding{ID: "router_bottleneck", Title: "t", Evidence: []diagnosis.Evidence{
		{Text: "router holds 12", Source: "dynamo_frontend_router_queue_pending_requests"},
		{Text: "http://e:8000: 0 waiting"},
	}})
	out := b.String()
	if strings.Contains(out, "()") {
		t.Errorf("an empty source printed:\n%s", out)
	}
	if !strings.Contains(out, "router holds 12  (dynamo_frontend_router_queue_pending_requests)") || !strings.Contains(out, "· http://e:8000: 0 waiting\n") {
		t.Errorf("report:\n%s", out)
	}
}
