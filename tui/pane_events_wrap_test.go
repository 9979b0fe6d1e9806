package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Zoomed at 80 columns the events pane cut an event's hint ("lower
// --max-num-bat…"): zoomed, the event and its hint wrap under themselves,
// every word on screen.
func TestZoomedEventsWrapAtEightyColumns(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(3, healthy) {
		m.Update(s)
	}
	title := "vLLM chunked prefill on: 8192 tokens per step, with prompt chunks and decodes sharing each step's budget"
	hint := "each engine step carries at most this many tokens, prompt chunks and decodes together: lower --max-num-batched-tokens for steadier ITL, raise it for faster prefill"
	m.Update(model.Event{Time: t0.Add(time.Second), Endpoint: testURL, Kind: "chunked_prefill", Severity: model.SevInfo, Title: title,
		Fields: map[string]string{"hint": hint}})
	m.Update(press("5"))
	out := screen(t, m, 80, 24)
	pane := out[strings.Index(out, "┏"):strings.Index(out, "┗")]
	if strings.Contains(pane, "…") {
		t.Errorf("zoomed events cut a line:\n%s", out)
	}
	for _, want := range strings.Fields(title + " " + hint) {
		if !strings.Contains(pane, want) {
			t.Errorf("%q missing from the zoomed events:\n%s", want, out)
		}
	}
	if !strings.Contains(pane, "┃         ↳ each engine step") || !strings.Contains(pane, "┃           and decodes together") {
		t.Errorf("the hint does not wrap under itself:\n%s", out)
	}
}
