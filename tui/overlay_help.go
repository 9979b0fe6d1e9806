package tui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func init() {
	RegisterOverlay(OverlaySpec{ID: "help", Key: DefaultKeyMap().Help, New: func() Overlay { return &helpOverlay{} }})
}

// helpOverlay lists every global key, then each pane's and overlay's own.
type helpOverlay struct{}

func (*helpOverlay) Title() string       { return "Help" }
func (*helpOverlay) Keys() []key.Binding { return nil }
func (*helpOverlay) HandleKey(tea.KeyPressMsg, *Data) (bool, tea.Cmd) {
	return false, nil
}

func (*helpOverlay) View(d *Data, w, h int) string {
	hm := help.New()
	hm.SetWidth(w)
	if d.Styles.NoColor {
		hm.Styles = help.Styles{}
	} else {
		hm.Styles = help.DefaultStyles(d.Styles.Dark)
	}
	var b strings.Builder
	b.WriteString(d.Styles.Title.Render("Keys") + "\n\n")
	b.WriteString(hm.FullHelpView(d.Keys.FullHelp()))
	b.WriteString("\n\n")
	b.WriteString(d.Styles.Title.Render("Panes") + "  (1–7 zoom, esc back; tab moves the focus)\n")
	for _, s := range paneSpecs {
		p := s.New()
		line := "  " + string(rune('0'+s.Slot)) + " " + p.Title()
		var ks []string
		for _, k := range p.Keys() {
			ks = append(ks, k.Help().Key+" "+k.Help().Desc)
		}
		if len(ks) > 0 {
			line += d.Styles.Faint.Render(" — " + strings.Join(ks, ", "))
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\n" + d.Styles.Title.Render("Screens") + "\n")
	for _, s := range overlaySpecs {
		o := s.New()
		k := s.Key
		if b, ok := d.Keys.overlayKey(s.ID); ok {
			k = b
		}
		line := "  " + k.Help().Key + " " + o.Title()
		var ks []string
		for _, k := range o.Keys() {
			ks = append(ks, k.Help().Key+" "+k.Help().Desc)
		}
		if len(ks) > 0 {
			line += d.Styles.Faint.Render(" — " + strings.Join(ks, ", "))
		}
		b.WriteString(line + "\n")
	}
	b.WriteString(d.Styles.Faint.Render("\nMissing values show --. ≈ marks percentiles estimated from histogram buckets over the window shown.\nRed/yellow follow the thresholds (config: $XDG_CONFIG_HOME/llmtop/config.toml)."))
	return b.String()
}
