package tui

import (
	"slices"

	"github.com/llmtop/llmtop/config"
)

// PaneConfig is the config's [panes] section (config.PaneConfig).
type PaneConfig = config.PaneConfig

// logPaneID is the optional log pane's ID in [panes].
const logPaneID = "log"

func paneIDs() []string {
	ids := make([]string, 0, len(paneSpecs)+1)
	for _, s := range paneSpecs {
		ids = append(ids, s.ID)
	}
	return append(ids, logPaneID)
}

// arrange is the live panes for c: the registered ones (and the log pane
// when asked) less the hidden, the ordered ones first. At least one pane
// stays: hiding every pane shows them all rather than an empty screen.
func arrange(c PaneConfig) []paneEntry {
	var all []paneEntry
	for _, s := range paneSpecs {
		all = append(all, paneEntry{id: s.ID, slot: s.Slot, p: s.New()})
	}
	if c.Log {
		all = append(all, paneEntry{id: logPaneID, slot: len(paneSpecs) + 1, p: &logPane{}})
	}
	var shown []paneEntry
	for _, p := range all {
		if !slices.Contains(c.Hide, p.id) {
			shown = append(shown, p)
		}
	}
	if len(shown) == 0 {
		shown = all
	}
	rank := func(id string) int {
		if i := slices.Index(c.Order, id); i >= 0 {
			return i
		}
		return len(c.Order)
	}
	slices.SortStableFunc(shown, func(a, b paneEntry) int { return rank(a.id) - rank(b.id) })
	return shown
}
