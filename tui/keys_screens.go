package tui

import (
	"fmt"
	"maps"
	"slices"
)

// What each screen (main, or an overlay by its ID) answers to, by config name (KeyMap's fields in snake
// case): a key must not do two things on one screen, and Clashes checks
// that. An overlay gets its keys first and then closes on back, on its
// own key and quits on quit; in a replay every screen also drives the
// replay (replayActions, after the screen's own keys). Keep this in step
// with the HandleKey methods: a key one of them matches is listed here.
var screenKeys = map[string][]string{
	"main": {"quit", "back", "focus", "focus_back", "zoom", "pause", "slower", "faster", "window_prev", "window_next",
		"save", "ack", "up", "down", "prev_endpoint", "next_endpoint",
		// the overlays it opens
		"help", "explain", "logs", "diagnose", "runs", "probe", "fleet", "bench"},
	"help":         {"down", "up"},
	"fleet":        {"down", "up", "page_down", "page_up", "confirm", "sort", "reverse", "search", "group"},
	"logs":         {"follow", "search", "next_match", "prev_match", "wrap", "top", "bottom", "page_up", "page_down", "up", "down"},
	"explain":      {"down", "up"},
	"diagnosis":    {"focus", "focus_back", "ack", "silence", "down", "up"},
	"runs":         {"down", "up"},
	"probe":        {"raw", "confirm", "down", "up"},
	"bench":        {"confirm", "runs", "down", "up", "focus", "focus_back", "increase", "decrease"},
	"bench_answer": {"yes", "no"},
}

// overlayOf is the action that opens (and closes) a screen other than
// main, where it is not the screen's name (an overlay's ID).
var overlayOf = map[string]string{"diagnosis": "diagnose", "bench_answer": "bench"}

// replayActions drive a replay from every screen (bench only says it is
// off there); a replay never shows the benchmark's form.
var replayActions = []string{"bench", "pause", "slower", "faster", "replay_step", "replay_back", "replay_forward",
	"replay_back_far", "replay_forward_far", "replay_next", "replay_start"}

// Clash is a key two actions share on one screen (in a replay: one of
// them a replay action).
type Clash struct {
	A, B, Key, Screen string
	Replay            bool
}

func (c Clash) String() string {
	s := fmt.Sprintf("%s and %s share %q on the %s screen", c.A, c.B, c.Key, c.Screen)
	if c.Replay {
		s += " in a replay"
	}
	return s
}

// Clashes lists every key that two actions of one screen share, live or
// in a replay.
func (k KeyMap) Clashes() []Clash {
	bs := k.bindings()
	screens := slices.Sorted(maps.Keys(screenKeys))
	var out []Clash
	for _, replay := range []bool{false, true} {
		for _, s := range screens {
			if replay && (s == "bench" || s == "bench_answer") {
				continue
			}
			acts := append([]string{}, screenKeys[s]...)
			if s != "main" {
				own := s
				if o, ok := overlayOf[s]; ok {
					own = o
				}
				acts = append(acts, own, "back", "quit")
			}
			if replay {
				acts = append(acts, replayActions...)
			}
			owner := map[string]string{}
			for _, a := range acts {
				b, ok := bs[a]
				if !ok {
					continue // TestScreenKeysNameActions keeps the table to real names
				}
				for _, key := range b.Keys() {
					o, taken := owner[key]
					switch {
					case !taken:
						owner[key] = a
					case o != a && (!replay || slices.Contains(replayActions, o) || slices.Contains(replayActions, a)):
						out = append(out, Clash{A: o, B: a, Key: key, Screen: s, Replay: replay})
					}
				}
			}
		}
	}
	return out
}
