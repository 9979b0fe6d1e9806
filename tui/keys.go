package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap is every global key. Panes and overlays list their own keys
// (Pane.Keys, Overlay.Keys); the help screen shows both.
//
// l opens the log view, so the hjkl family is j/k (move focus, scroll) and
// h/← → (previous/next endpoint): l is not "right" here.
type KeyMap struct {
	Help, Quit, Back                     key.Binding
	Focus, FocusBack                     key.Binding
	Zoom                                 key.Binding // 1–7, one help line
	Pause, Slower, Faster                key.Binding
	WindowPrev, WindowNext               key.Binding
	Explain, Save, Bench, Logs, Diagnose key.Binding
	Runs                                 key.Binding
	Up, Down, PrevEndpoint, NextEndpoint key.Binding
}

// DefaultKeyMap is the keymap without user overrides.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, h, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(h, desc))
	}
	return KeyMap{
		Help:         b([]string{"?"}, "?", "help"),
		Quit:         b([]string{"q", "ctrl+c"}, "q", "quit"),
		Back:         b([]string{"esc"}, "esc", "back"),
		Focus:        b([]string{"tab"}, "tab", "next pane"),
		FocusBack:    b([]string{"shift+tab"}, "shift+tab", "previous pane"),
		Zoom:         b([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, "1-9", "zoom pane"),
		Pause:        b([]string{"p", "space"}, "p/space", "pause"),
		Slower:       b([]string{"+", "="}, "+", "longer interval"),
		Faster:       b([]string{"-", "_"}, "-", "shorter interval"),
		WindowPrev:   b([]string{"["}, "[", "shorter window"),
		WindowNext:   b([]string{"]"}, "]", "longer window"),
		Explain:      b([]string{"e"}, "e", "explain metrics"),
		Save:         b([]string{"s"}, "s", "save JSON snapshot"),
		Bench:        b([]string{"b"}, "b", "benchmark"),
		Logs:         b([]string{"l"}, "l", "log view"),
		Diagnose:     b([]string{"d"}, "d", "diagnosis list"),
		Runs:         b([]string{"r"}, "r", "engine runs: compare restarts"),
		Up:           b([]string{"k", "up"}, "k/↑", "up / scroll"),
		Down:         b([]string{"j", "down"}, "j/↓", "down / scroll"),
		PrevEndpoint: b([]string{"h", "left"}, "h/←", "previous endpoint"),
		NextEndpoint: b([]string{"right"}, "→", "next endpoint"),
	}
}

// zoomKeys is the zoom binding for the panes registered now: unless the
// config rebound it, the registered slots' digits in slot order (the i-th
// key zooms the i-th pane).
func zoomKeys(z key.Binding) key.Binding {
	if !slices.Equal(z.Keys(), DefaultKeyMap().Zoom.Keys()) {
		return z
	}
	var ks []string
	for _, s := range paneSpecs {
		if s.Slot >= 1 && s.Slot <= 9 {
			ks = append(ks, strconv.Itoa(s.Slot))
		}
	}
	if len(ks) == 0 {
		return z
	}
	h := ks[0]
	if len(ks) > 1 {
		h += "-" + ks[len(ks)-1]
	}
	return key.NewBinding(key.WithKeys(ks...), key.WithHelp(h, z.Help().Desc))
}

// ShortHelp is the footer line.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.Focus, k.Zoom, k.Pause, k.Logs, k.Explain, k.Quit}
}

// FullHelp groups every key for the help screen.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Help, k.Quit, k.Back, k.Focus, k.FocusBack, k.Zoom},
		{k.Up, k.Down, k.PrevEndpoint, k.NextEndpoint, k.Pause},
		{k.Slower, k.Faster, k.WindowPrev, k.WindowNext},
		{k.Explain, k.Save, k.Logs, k.Bench, k.Diagnose, k.Runs},
	}
}

// bindings maps config names to the bindings they override.
func (k *KeyMap) bindings() map[string]*key.Binding {
	return map[string]*key.Binding{
		"help": &k.Help, "quit": &k.Quit, "back": &k.Back, "focus": &k.Focus, "focus_back": &k.FocusBack,
		"pause": &k.Pause, "slower": &k.Slower, "faster": &k.Faster,
		"window_prev": &k.WindowPrev, "window_next": &k.WindowNext, "explain": &k.Explain,
		"save": &k.Save, "bench": &k.Bench, "logs": &k.Logs, "diagnose": &k.Diagnose, "runs": &k.Runs,
		"up": &k.Up, "down": &k.Down, "prev_endpoint": &k.PrevEndpoint, "next_endpoint": &k.NextEndpoint,
	}
}

// Rebind sets the keys of the binding named name (a config [keys] entry).
func (k *KeyMap) Rebind(name string, keys []string) error {
	b, ok := k.bindings()[name]
	if !ok {
		names := make([]string, 0, 20)
		for n := range k.bindings() {
			names = append(names, n)
		}
		return fmt.Errorf("unknown key action %q (one of: %s)", name, strings.Join(sortStrings(names), ", "))
	}
	if len(keys) == 0 {
		return fmt.Errorf("no keys given for %q", name)
	}
	desc := b.Help().Desc
	b.SetKeys(keys...)
	b.SetHelp(strings.Join(keys, "/"), desc)
	return nil
}

// overlayKey is the keymap's binding for an overlay registered under id,
// so that a [keys] rebinding in the config moves the overlay too.
func (k KeyMap) overlayKey(id string) (key.Binding, bool) {
	switch id {
	case "help":
		return k.Help, true
	case "logs":
		return k.Logs, true
	case "explain":
		return k.Explain, true
	case "bench":
		return k.Bench, true
	case "diagnosis", "diagnose":
		return k.Diagnose, true
	case "runs":
		return k.Runs, true
	}
	return key.Binding{}, false
}
