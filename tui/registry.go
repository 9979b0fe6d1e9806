package tui

import (
	"sort"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Pane is one box of the monitor. It renders its content for the size the
// layout gives it (borders and title are drawn by the root) and lists its
// own keys for the help screen.
type Pane interface {
	Title() string
	// Height is the content height the pane would like at width w; the
	// layout gives it more or less.
	Height(d *Data, w int) int
	// View renders at most h lines of at most w cells.
	View(d *Data, w, h int) string
	Keys() []key.Binding
}

// Keyed is a pane drawn from part of the data: DrawKey changes whenever
// its content may (a sum of Data's per-input versions), and the root
// redraws it only then (or on input, resize, focus, or when what it read
// of the clock reads differently: see draw_clock.go).
// Panes that do not implement it are redrawn on every change of data.
type Keyed interface {
	DrawKey(d *Data) uint64
}

// Scroller is a pane with more lines than it shows; j/k reach it when it
// has the focus.
type Scroller interface {
	Scroll(delta int)
}

// Selector is a pane whose down and up keys (and the wheel) choose what
// the screen shows (the Endpoints pane: the endpoint) rather than scroll.
type Selector interface {
	Select(delta int, d *Data)
}

// Receiver gets every message the root does not handle itself (a
// component's own result messages, for example).
type Receiver interface {
	Receive(msg tea.Msg, d *Data) tea.Cmd
}

// Overlay is a full-screen view opened by a key (help, explain, logs,
// benchmark…).
type Overlay interface {
	Title() string
	Keys() []key.Binding
	// HandleKey gets every key while the overlay is open. handled=false
	// lets the root apply the global keys (esc closes, q quits).
	HandleKey(msg tea.KeyPressMsg, d *Data) (handled bool, cmd tea.Cmd)
	View(d *Data, w, h int) string
}

// Opener is an overlay that wants to know when it opens.
type Opener interface {
	Open(d *Data) tea.Cmd
}

// PaneSpec registers a pane. Slot orders the panes and is the zoom key
// (1–9); ID names it in the layout tables.
type PaneSpec struct {
	ID   string
	Slot int
	New  func() Pane
}

// OverlaySpec registers an overlay opened by Key.
type OverlaySpec struct {
	ID  string
	Key key.Binding
	New func() Overlay
}

var (
	paneSpecs    []PaneSpec
	overlaySpecs []OverlaySpec
)

// RegisterPane adds a pane, or replaces the pane with the same ID that was
// registered before it. Call it from an init function.
func RegisterPane(s PaneSpec) {
	for i, p := range paneSpecs {
		if p.ID == s.ID {
			paneSpecs[i] = s
			return
		}
	}
	paneSpecs = append(paneSpecs, s)
	sort.SliceStable(paneSpecs, func(i, j int) bool { return paneSpecs[i].Slot < paneSpecs[j].Slot })
}

// RegisterOverlay adds an overlay, or replaces the one with the same ID.
// Call it from an init function.
func RegisterOverlay(s OverlaySpec) {
	for i, o := range overlaySpecs {
		if o.ID == s.ID {
			overlaySpecs[i] = s
			return
		}
	}
	overlaySpecs = append(overlaySpecs, s)
}

// paneEntry is a live pane.
type paneEntry struct {
	id     string
	slot   int
	p      Pane
	key    boxKey   // what cached was drawn for
	clock  clockUse // and what it read of the clock
	cached []string // the pane in its box
	// height is the pane's wish for the width in hkey, while hok
	height int
	hkey   boxKey
	hclock clockUse
	hok    bool
	box    boxMemo // the lines cached was put together from
}

// overlayEntry is a live overlay and the key that opens it.
type overlayEntry struct {
	id  string
	key key.Binding
	o   Overlay
}
