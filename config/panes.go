package config

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

func (p *PaneConfig) set(k, v string, check Checker) error {
	switch k {
	case "order", "hide":
		l, err := parseList(v)
		if err != nil {
			return err
		}
		if check != nil {
			known := check.PaneIDs()
			for _, id := range l {
				if !slices.Contains(known, id) {
					return fmt.Errorf("%s: unknown pane %q (one of: %s)", k, id, strings.Join(known, ", "))
				}
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
