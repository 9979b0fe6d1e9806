package tui

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
)

// No key does two things on one screen, live or in a replay.
func TestNoKeySharedOnAScreen(t *testing.T) {
	if c := DefaultKeyMap().Clashes(); len(c) > 0 {
		t.Errorf("default keys clash: %v", c)
	}
}

// The replay's first keys (n step, g start, f next finding, > +10m) each
// did two things on a screen a replay shows; Clashes names them.
func TestClashesNamesSharedKeys(t *testing.T) {
	km := DefaultKeyMap()
	for n, k := range map[string]string{"replay_step": "n", "replay_start": "g", "replay_next": "f", "replay_forward_far": ">"} {
		if err := km.Rebind(n, []string{k}); err != nil {
			t.Fatal(err)
		}
	}
	var cs []string
	for _, c := range km.Clashes() {
		cs = append(cs, c.String())
	}
	got := strings.Join(cs, "\n")
	for _, want := range []string{
		`next_match and replay_step share "n" on the logs screen in a replay`,
		`top and replay_start share "g" on the logs screen in a replay`,
		`fleet and replay_next share "f" on the main screen in a replay`,
		`sort and replay_forward_far share ">" on the fleet screen in a replay`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Clashes lacks %q:\n%s", want, got)
		}
	}
	// a live clash
	km = DefaultKeyMap()
	if err := km.Rebind("wrap", []string{"F"}); err != nil {
		t.Fatal(err)
	}
	if got := km.Clashes(); len(got) != 1 || got[0].String() != `follow and wrap share "F" on the logs screen` {
		t.Errorf("Clashes = %q", got)
	}
}

// screenKeys lists every screen and the keys each one shows (its Keys()):
// a new overlay or key cannot slip past Clashes.
func TestScreenKeysCoverTheScreens(t *testing.T) {
	screens := map[string][]key.Binding{"bench": NewBenchOverlay(&fakeRunner{}).Keys(), "probe": NewProbeOverlay(nil).Keys()}
	owns := map[string]key.Binding{"bench": DefaultKeyMap().Bench, "probe": DefaultKeyMap().Probe}
	for _, s := range overlaySpecs {
		screens[s.ID], owns[s.ID] = s.New().Keys(), s.Key
	}
	for _, p := range paneSpecs {
		screens["main"] = append(screens["main"], p.New().Keys()...)
	}
	for id, ks := range screens {
		listed, ok := screenKeys[id]
		if !ok {
			t.Errorf("screenKeys lacks the screen %q", id)
			continue
		}
		for _, b := range ks {
			if a := actionOf(b); !slices.Contains(listed, a) && (id == "main" || a != ownAction(id)) {
				t.Errorf("screen %s shows %s (%q), which screenKeys does not list", id, a, b.Help().Key)
			}
		}
		if own, ok := owns[id]; ok && actionOf(own) != ownAction(id) {
			t.Errorf("screen %s opens on %s, screenKeys says %s", id, actionOf(own), ownAction(id))
		}
		if own, ok := owns[id]; ok && !slices.Contains(screenKeys["main"], actionOf(own)) {
			t.Errorf("main does not list %s, which opens %s", actionOf(own), id)
		}
	}
}

func ownAction(screen string) string {
	if o, ok := overlayOf[screen]; ok {
		return o
	}
	return screen
}

// actionOf is the config name of a default binding (relabelled or not).
func actionOf(b key.Binding) string {
	dv := reflect.ValueOf(DefaultKeyMap())
	for i := range dv.NumField() {
		d, ok := dv.Field(i).Interface().(key.Binding)
		if ok && slices.Equal(d.Keys(), b.Keys()) && d.Help().Key == b.Help().Key {
			return snake(dv.Type().Field(i).Name)
		}
	}
	return "?" + b.Help().Key
}

// A config that gives two actions of one screen the same key is refused
// by every face that reads it, naming both actions.
func TestConfigWithClashingKeysIsRefused(t *testing.T) {
	_, err := ParseConfig("config.toml", []byte("[keys]\ndown = \"b\"\n"))
	if err == nil || !strings.Contains(err.Error(), "share \"b\"") {
		t.Fatalf("err %v, want the clash of down and bench named", err)
	}
	if _, err := ParseConfig("config.toml", []byte("[keys]\ndown = \"ctrl+n\"\n")); err != nil {
		t.Fatalf("a free key refused: %v", err)
	}
}

// Every action the screen table and the replay list name is a KeyMap
// action: Clashes skips a name it does not know, so a typo would hide a
// clash.
func TestScreenKeysNameActions(t *testing.T) {
	km := DefaultKeyMap()
	bs := km.bindings()
	names := slices.Concat(replayActions, slices.Collect(maps.Values(overlayOf)))
	for _, acts := range screenKeys {
		names = append(names, acts...)
	}
	for _, a := range names {
		if _, ok := bs[a]; !ok {
			t.Errorf("%q is not a KeyMap action", a)
		}
	}
}
