package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PaneConfig is the config's [panes] section: which panes the grid and the
// tab bar show, in which order, and whether the engine log is a pane of
// its own there (the l view stays either way).
//
//	[panes]
//	order = ["diagnosis", "latency"]  # these first, the others after in their usual order
//	hide = ["throughput"]
//	log = true
type PaneConfig struct {
	Order, Hide []string
	Log         bool
}

// logPaneID is the optional log pane's ID in [panes].
const logPaneID = "log"

func paneIDs() []string {
	ids := make([]string, 0, len(paneSpecs)+1)
	for _, s := range paneSpecs {
		ids = append(ids, s.ID)
	}
	return append(ids, logPaneID)
}

func (p *PaneConfig) set(k, v string) error {
	switch k {
	case "order", "hide":
		l, err := parseList(v)
		if err != nil {
			return err
		}
		known := paneIDs()
		for _, id := range l {
			if !slices.Contains(known, id) {
				return fmt.Errorf("%s: unknown pane %q (one of: %s)", k, id, strings.Join(known, ", "))
			}
		}
		if k == "order" {
			p.Order = l
		} else {
			p.Hide = l
		}
	case "log":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("log: want true or false, got %s", v)
		}
		p.Log = b
	default:
		return fmt.Errorf("unknown setting %q in [panes] (known: order, hide, log)", k)
	}
	return nil
}

// arrange is the live panes for c: the registered ones (and the log pane
// when asked) less the hidden, the ordered ones first. At least one pane
// stays: hiding every pane shows them all rather than an empty screen.
func (c PaneConfig) arrange() []paneEntry {
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
