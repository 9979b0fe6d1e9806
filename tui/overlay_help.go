package tui

import (
	"fmt"
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
	if d.Replay != nil {
		var ks []string
		for _, k := range d.Keys.ReplayKeys() {
			ks = append(ks, k.Help().Key+" "+k.Help().Desc)
		}
		writeKeysLine(&b, d, d.Styles.Title.Render("Replay"), ks, w)
		b.WriteString(d.Styles.Faint.Render("  on every screen; "+d.Keys.ReplayNext.Help().Key+" seeks to the next moment a finding opened or an engine run started") + "\n\n")
	}
	zk := d.Keys.Zoom
	fmt.Fprintf(&b, "%s  (%s zoom, %s back; %s moves the focus)\n", d.Styles.Title.Render("Panes"), zk.Help().Key, d.Keys.Back.Help().Key, d.Keys.Focus.Help().Key)
	b.WriteString(d.Styles.Faint.Render(fmt.Sprintf("  %s/%s scroll the focused pane; in one that does not scroll they move to the next/previous pane (zoomed too)",
		d.Keys.Down.Help().Key, d.Keys.Up.Help().Key)) + "\n")
	for i, p := range d.panes {
		z := "·"
		if i < len(zk.Keys()) {
			z = zk.Keys()[i]
		}
		line := "  " + z + " " + p.Title()
		var ks []string
		for _, k := range d.Keys.currentAll(p.Keys()) {
			ks = append(ks, k.Help().Key+" "+k.Help().Desc)
		}
		writeKeysLine(&b, d, line, ks, w)
	}
	b.WriteString("\n" + d.Styles.Title.Render("Screens") + "\n")
	for _, s := range overlaySpecs {
		o := s.New()
		k := d.Keys.Current(s.Key)
		line := "  " + k.Help().Key + " " + o.Title()
		var ks []string
		for _, k := range d.Keys.currentAll(o.Keys()) {
			ks = append(ks, k.Help().Key+" "+k.Help().Desc)
		}
		writeKeysLine(&b, d, line, ks, w)
	}
	b.WriteString(d.Styles.Faint.Render("\nMissing values show --. ≈ marks percentiles estimated from histogram buckets over the window shown.\nRed/yellow follow the thresholds (config: $XDG_CONFIG_HOME/llmtop/config.toml)."))
	return b.String()
}

// writeKeysLine writes what, then its keys, wrapped at spaces under it.
func writeKeysLine(b *strings.Builder, d *Data, what string, ks []string, w int) {
	if len(ks) == 0 {
		b.WriteString(what + "\n")
		return
	}
	for i, l := range wrapIndent(what+" — ", "      ", strings.Join(ks, ", "), w) {
		if i == 0 {
			l = what + d.Styles.Faint.Render(strings.TrimPrefix(l, what))
		} else {
			l = d.Styles.Faint.Render(l)
		}
		b.WriteString(l + "\n")
	}
}
