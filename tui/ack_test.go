package tui

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// a acknowledges the top finding: the top line moves to the next one, the
// d list keeps it dimmed and last, the JSON snapshot says so; S in the d
// list silences the picked finding's rule.
func TestAckTopFindingAndSilence(t *testing.T) {
	m := scenario(stressed, 8, true)
	first, _ := topFinding(m.d)
	m.Update(press("a"))
	now, ok := topFinding(m.d)
	if !ok || now.Title == first.Title && now.ID == first.ID && now.Endpoint == first.Endpoint {
		t.Fatalf("a did not move the top line off %q", first.Title)
	}
	if out := screen(t, m, 200, 60); !strings.Contains(out, first.Severity.Tag()+" "+first.Title+" (ack)") {
		t.Errorf("the Diagnosis pane does not dim the acknowledged finding:\n%s", out)
	}
	fs := m.d.Core.Report().Findings
	if last := fs[len(fs)-1]; !last.Acked || last.ID != first.ID {
		t.Errorf("the acknowledged finding is not last and marked: %+v", last)
	}
	b, err := snapshotBytes(BuildSnapshot(m.d))
	if err != nil || !strings.Contains(string(b), `"acked": true`) {
		t.Errorf("the snapshot does not carry the acknowledgement (%v)", err)
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	m.Update(press("d"))
	c := m.d.Core
	if view := ansi.Strip(strings.Join(listLines(m.d, c.Report(), c.History(), c.Config(), 200, 0), "\n")); !strings.Contains(view, first.Severity.Tag()+" "+first.Title+" (acknowledged)") {
		t.Errorf("the d list does not mark the acknowledged finding:\n%s", view)
	}
	// pick the second finding and silence its rule
	m.Update(press("tab"))
	picked := m.d.Core.Report().Findings[1]
	m.Update(press("S"))
	var doc struct {
		Silenced map[string]string `json:"silenced"`
	}
	b, _ = snapshotBytes(BuildSnapshot(m.d))
	if err := json.Unmarshal(b, &doc); err != nil || doc.Silenced[picked.ID] == "" {
		t.Errorf("S did not silence %s: %v %v", picked.ID, doc.Silenced, err)
	}
	if view := ansi.Strip(m.Render()); !strings.Contains(view, "silenced: "+picked.ID+" until") {
		t.Errorf("the d list does not name the silence:\n%s", view)
	}
}

// With every finding acknowledged the top line says so instead of
// vanishing.
func TestAllAcknowledgedIsSaid(t *testing.T) {
	m := scenario(stressed, 8, true)
	for range len(m.d.Core.Report().Findings) {
		m.Update(press("a"))
	}
	if _, ok := topFinding(m.d); ok {
		t.Fatal("a finding is left unacknowledged")
	}
	out := screen(t, m, 120, 40)
	if !strings.Contains(strings.Split(out, "\n")[2], "12 finding(s) open, all acknowledged or silenced (d lists them)") {
		t.Errorf("the top line does not say every finding is acknowledged:\n%s", out)
	}
}
