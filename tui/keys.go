package tui

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"

	"github.com/llmtop/llmtop/model"
)

// KeyMap is every key of the program: the global ones, the panes', the
// overlays' (the log view's, the bench form's) and the zoom keys. Nothing
// else compares key strings, so a [keys] rebinding in the config moves a
// key everywhere it is used and shown (help, footer, tab bar).
//
// A new key is a field here and its default in DefaultKeyMap: its config
// name is the field's name in snake case (PrevEndpoint: prev_endpoint),
// and an overlay registered with Key: DefaultKeyMap().X opens on the
// user's X.
//
// l opens the log view, so the hjkl family is j/k (move focus, scroll) and
// h/← → (previous/next endpoint): l is not "right" here.
type KeyMap struct {
	Help, Quit, Back                     key.Binding
	Focus, FocusBack                     key.Binding
	Zoom                                 key.Binding // one key per registered pane, in slot order
	Pause, Slower, Faster                key.Binding
	WindowPrev, WindowNext               key.Binding
	Explain, Save, Bench, Logs, Diagnose key.Binding
	Runs                                 key.Binding
	Probe                                key.Binding // the behaviour probe (tui/overlay_probe.go)
	Up, Down, PrevEndpoint, NextEndpoint key.Binding
	Fleet                                key.Binding // the fleet table (tui/fleet.go)
	// The fleet table (htop's keys where it has them).
	Sort, Reverse, Group key.Binding
	// The probe overlay: its raw requests and responses.
	Raw key.Binding
	// Findings: acknowledge the selected one, silence its rule.
	Ack, Silence key.Binding
	// Apply a finding's change to an engine llmtop launched; undo it.
	Apply, Undo key.Binding
	// Long views (the log view, lists).
	PageUp, PageDown, Top, Bottom key.Binding
	// The log view.
	Follow, Search, NextMatch, PrevMatch, Wrap key.Binding
	// Forms (the benchmark): confirm, answer, change a value.
	Confirm, Yes, No, Increase, Decrease key.Binding
	// A replay (llmtop replay) moves through the recording with these;
	// Pause pauses it and Slower/Faster (+/-) double/halve its speed there.
	// They work on every screen of a replay, so none may share a key with
	// a screen's own (see screenKeys).
	ReplayStep, ReplayBack, ReplayForward, ReplayBackFar, ReplayForwardFar key.Binding
	ReplayNext, ReplayStart                                                key.Binding
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
		Probe:        b([]string{"o"}, "o", "behaviour probe"),
		Up:           b([]string{"k", "up"}, "k/↑", "up / scroll"),
		Down:         b([]string{"j", "down"}, "j/↓", "down / scroll"),
		PrevEndpoint: b([]string{"h", "left"}, "h/←", "previous endpoint"),
		NextEndpoint: b([]string{"right"}, "→", "next endpoint"),
		Fleet:        b([]string{"f"}, "f", "fleet: every endpoint"),
		Sort:         b([]string{">"}, ">", "sort by next column"),
		Reverse:      b([]string{"I"}, "I", "invert the order"),
		Group:        b([]string{"m"}, "m", "group by model"),
		Raw:          b([]string{"x"}, "x", "raw requests/responses"),
		Ack:          b([]string{"a"}, "a", "acknowledge the finding (this run)"),
		Silence:      b([]string{"S"}, "S", "silence the finding's rule for an hour"),
		Apply:        b([]string{"A"}, "A", "apply a finding's change (an engine llmtop launched)"),
		Undo:         b([]string{"U"}, "U", "undo the applied change"),
		PageUp:       b([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
		PageDown:     b([]string{"pgdown", "ctrl+f"}, "pgdn", "page down"),
		Top:          b([]string{"g", "home"}, "g", "oldest / top"),
		Bottom:       b([]string{"G", "end"}, "G", "newest / bottom"),
		Follow:       b([]string{"F"}, "F", "follow on/off"), // less's F; f is the fleet
		Search:       b([]string{"/"}, "/", "search"),
		NextMatch:    b([]string{"n"}, "n", "next match"),
		PrevMatch:    b([]string{"N"}, "N", "previous match"),
		Wrap:         b([]string{"w"}, "w", "wrap long lines"),
		Confirm:      b([]string{"enter"}, "enter", "start / confirm"),
		Yes:          b([]string{"y", "Y"}, "y", "yes"),
		No:           b([]string{"n", "N"}, "n", "no"),
		Increase:     b([]string{"l", "right", "+"}, "→", "next value"),
		Decrease:     b([]string{"h", "left", "-"}, "←", "previous value"),
		// n (next match), g (top), f (fleet) and > (sort) are taken on
		// screens a replay shows; these are free on all of them.
		ReplayStep:       b([]string{"t"}, "t", "step 1s"),
		ReplayBack:       b([]string{","}, ",", "−1 min"),
		ReplayForward:    b([]string{"."}, ".", "+1 min"),
		ReplayBackFar:    b([]string{"{"}, "{", "−10 min"),
		ReplayForwardFar: b([]string{"}"}, "}", "+10 min"),
		ReplayNext:       b([]string{"!"}, "!", "next finding/restart"),
		ReplayStart:      b([]string{"0"}, "0", "to the start"),
	}
}

// zoomKeys is the zoom binding for n panes: unless the config rebound it,
// the digits 1 to n (at most 9); the i-th key zooms the i-th pane in the
// screen's order (the registered slots' order unless the config's [panes]
// changed it).
func zoomKeys(z key.Binding, n int) key.Binding {
	if !slices.Equal(z.Keys(), DefaultKeyMap().Zoom.Keys()) {
		return z
	}
	var ks []string
	for i := 1; i <= min(n, 9); i++ {
		ks = append(ks, strconv.Itoa(i))
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
	return []key.Binding{k.Help, k.Focus, k.Zoom, k.Pause, k.Logs, k.Diagnose, k.Explain, k.Quit}
}

// FullHelp groups the global keys for the help screen (the panes' and
// screens' own keys follow them there).
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Help, k.Quit, k.Back, k.Focus, k.FocusBack, k.Zoom},
		{k.Up, k.Down, k.PrevEndpoint, k.NextEndpoint, k.Pause},
		{k.Slower, k.Faster, k.WindowPrev, k.WindowNext},
		{k.Explain, k.Save, k.Logs, k.Bench, k.Diagnose, k.Runs, k.Probe, k.Apply},
	}
}

// bindings maps config names (the fields' names in snake case) to the
// bindings they override.
func (k *KeyMap) bindings() map[string]*key.Binding {
	v := reflect.ValueOf(k).Elem()
	t := v.Type()
	out := make(map[string]*key.Binding, t.NumField())
	for i := range t.NumField() {
		if b, ok := v.Field(i).Addr().Interface().(*key.Binding); ok {
			out[snake(t.Field(i).Name)] = b
		}
	}
	return out
}

func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Rebind sets the keys of the binding named name (a config [keys] entry).
func (k *KeyMap) Rebind(name string, keys []string) error {
	bs := k.bindings()
	b, ok := bs[name]
	if !ok {
		names := make([]string, 0, len(bs))
		for n := range bs {
			names = append(names, n)
		}
		return fmt.Errorf("unknown key action %q (one of: %s)", name, strings.Join(sortStrings(names), ", "))
	}
	if len(keys) == 0 {
		return fmt.Errorf("no keys given for %q", name)
	}
	for _, k := range keys {
		if err := checkKeyName(k); err != nil {
			return fmt.Errorf("%q: %v", name, err)
		}
	}
	desc := b.Help().Desc
	b.SetHelp(strings.Join(keys, "/"), desc)
	if name == "quit" && !slices.Contains(keys, "ctrl+c") {
		// ctrl+c always quits (unlisted): a config can choose the quit
		// keys, never lock the person in
		keys = append(keys, "ctrl+c")
	}
	b.SetKeys(keys...)
	return nil
}

// Current is the user's binding for def, a binding of DefaultKeyMap (what
// a pane or an overlay lists, or registers its overlay under), keeping
// def's description (a pane may say what the key does there: relabel);
// def itself when it is none of them.
func (k KeyMap) Current(def key.Binding) key.Binding {
	dv, kv := reflect.ValueOf(DefaultKeyMap()), reflect.ValueOf(k)
	for i := range dv.NumField() {
		b, ok := dv.Field(i).Interface().(key.Binding)
		if !ok || !slices.Equal(b.Keys(), def.Keys()) || b.Help().Key != def.Help().Key {
			continue
		}
		u := kv.Field(i).Interface().(key.Binding)
		u.SetHelp(u.Help().Key, def.Help().Desc)
		return u
	}
	return def
}

// scrollKeys are the down and up keys described for a view that scrolls
// what ("events", "GPUs").
func scrollKeys(what string) []key.Binding {
	k := DefaultKeyMap()
	return []key.Binding{relabel(k.Down, what+" down"), relabel(k.Up, what+" up")}
}

// relabel is b described for one place ("field" for j/k in a form).
func relabel(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// currentAll maps Current over bs.
func (k KeyMap) currentAll(bs []key.Binding) []key.Binding {
	out := make([]key.Binding, len(bs))
	for i, b := range bs {
		out[i] = k.Current(b)
	}
	return out
}

// checkKeyName accepts a key as Bubble Tea names it ("q", "ctrl+c",
// "shift+tab", "f5", " "): printable, one line, short. A config's key is
// drawn in the footer and the help: an escape sequence there would be
// written to the terminal raw.
func checkKeyName(k string) error {
	switch {
	case k == "":
		return errors.New("an empty key name: no key sends it")
	case utf8.RuneCountInString(k) > 24:
		return fmt.Errorf("%.24q…: longer than any key's name", k)
	case model.Unsafe(k) || strings.ContainsAny(k, "\t\n\r\x1b\x7f") || !utf8.ValidString(k):
		return fmt.Errorf("%s: not a key's name (control characters or escape sequences)", strconv.QuoteToASCII(k))
	}
	for _, r := range k {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%s: not a key's name (unprintable)", strconv.QuoteToASCII(k))
		}
	}
	return nil
}
