package tui

import (
	"testing"

	"github.com/llmtop/llmtop/model"
)

// A KV floor with a top (llama.cpp, layout unknown) shows the range and is not judged fine when
// the top crosses the critical mark.
func TestKVSymptomRange(t *testing.T) {
	th := DefaultThresholds
	for _, c := range []struct {
		floor, top float64
		value      string
		lvl        Level
	}{
		{0.22, 0.9, "22%–90%?", LevelOK}, // below the mark whatever the layout
		{0.24, 0.99, "24%–99%?", LevelNone},
		{0.97, 0.99, "97%–99%?", LevelCrit},
	} {
		st := model.State{KVUsage: model.Some(c.floor), KVUsageMax: model.Some(c.top)}
		if r := kvSymptom(th, st); r.value != c.value || r.lvl != c.lvl {
			t.Errorf("floor %v top %v: %q level %v, want %q %v", c.floor, c.top, r.value, r.lvl, c.value, c.lvl)
		}
	}
	if r := kvSymptom(th, model.State{KVUsage: model.Some(0.5)}); r.value != "50%" || r.lvl != LevelOK {
		t.Errorf("a known KV: %q %v", r.value, r.lvl)
	}
}
