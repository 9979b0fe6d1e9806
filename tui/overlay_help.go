package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

func init() {
	RegisterOverlay(OverlaySpec{ID: "help", Key: DefaultKeyMap().Help, New: func() Overlay { return &helpOverlay{} }})
}

// helpOverlay lists every global key, then each pane's and overlay's own;
// taller than the screen (80×24), it scrolls.
type helpOverlay struct{ top int }

func (*helpOverlay) Title() string       { return "Help" }
func (*helpOverlay) Keys() []key.Binding { return scrollKeys("scroll") }
func (o *helpOverlay) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	return scrollKey(msg, d, &o.top), nil
}

func (o *helpOverlay) View(d *Data, w, h int) string {
	out := strings.Split(strings.TrimRight(helpText(d, w), "\n"), "\n")
	if len(out) <= h {
		o.top = 0
		return lines(out, h)
	}
	// The last line says there is more, and which key shows it.
	o.top = min(o.top, len(out)-h+1)
	page := append([]string(nil), out[o.top:min(len(out), o.top+h-1)]...)
	more := fmt.Sprintf("%d more lines: %s", len(out)-o.top-len(page), d.Keys.Down.Help().Key)
	if o.top+len(page) >= len(out) {
		more = "top: " + d.Keys.Up.Help().Key
	}
	return lines(append(page, d.Styles.Faint.Render(clip("── "+more+" ──", w))), h)
}

// fullHelp lays the global key groups out in as many rows of columns as
// the width needs: bubbles' FullHelpView cuts the columns that do not fit
// to "…", which hid half the keys at 80 and 120 columns.
func fullHelp(hm help.Model, groups [][]key.Binding, w int) string {
	var rows []string
	var row [][]key.Binding
	for _, g := range groups {
		if len(row) > 0 && lipgloss.Width(hm.FullHelpView(append(row[:len(row):len(row)], g))) > w {
			rows = append(rows, hm.FullHelpView(row))
			row = nil
		}
		row = append(row, g)
	}
	if len(row) > 0 {
		rows = append(rows, hm.FullHelpView(row))
	}
	return strings.Join(rows, "\n\n")
}

// helpText is the whole help, its lines at most w cells.
func helpText(d *Data, w int) string {
	hm := help.New()
	hm.SetWidth(0) // fullHelp fits the columns to w
	if d.Styles.NoColor {
		hm.Styles = help.Styles{}
	} else {
		hm.Styles = help.DefaultStyles(d.Styles.Dark)
	}
	var b strings.Builder
	b.WriteString(d.Styles.Title.Render("Keys") + "\n\n")
	groups := d.Keys.FullHelp()
	if d.Replay != nil {
		groups = d.Keys.replayFullHelp()
	}
	b.WriteString(fullHelp(hm, groups, w))
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
	for _, l := range wrapIndent("  ", "  ", fmt.Sprintf("%s/%s scroll the focused pane; in one that does not scroll they move to the next/previous pane (zoomed too)",
		d.Keys.Down.Help().Key, d.Keys.Up.Help().Key), w) {
		b.WriteString(d.Styles.Faint.Render(l) + "\n")
	}
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
		if d.Replay != nil && s.ID == "bench" {
			continue // off in a replay: the grid above says so
		}
		o := s.New()
		k := d.Keys.Current(s.Key)
		line := "  " + k.Help().Key + " " + o.Title()
		var ks []string
		for _, k := range d.Keys.currentAll(o.Keys()) {
			ks = append(ks, k.Help().Key+" "+k.Help().Desc)
		}
		writeKeysLine(&b, d, line, ks, w)
	}
	b.WriteString("\n")
	for _, l := range append(wrapIndent("", "", "Missing values show --. ≈ marks percentiles estimated from histogram buckets over the window shown.", w),
		wrapIndent("", "", "Red/yellow follow the thresholds (config: $XDG_CONFIG_HOME/llmtop/config.toml).", w)...) {
		b.WriteString(d.Styles.Faint.Render(l) + "\n")
	}
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
