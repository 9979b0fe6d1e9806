package engine

import "encoding/json"

const llamaGenNote = "generated tokens include busy slots' n_decoded from /slots: llama.cpp's own counter moves only when a request ends"

// decodedInFlight sums the tokens busy slots have generated so far
// (next_token.n_decoded; next_token[0] where it is an array). known is
// whether any slot said: without /slots the in-flight part is unknown.
func decodedInFlight(slots []llamaSlot) (sum float64, known bool) {
	for _, sl := range slots {
		n, ok := sl.decoded()
		if !ok {
			continue
		}
		known = true
		if sl.IsProcessing {
			sum += n
		}
	}
	return sum, known
}

// decoded is the slot's next_token n_decoded, object or array form.
func (sl llamaSlot) decoded() (float64, bool) {
	var one struct {
		NDecoded *float64 `json:"n_decoded"`
	}
	if json.Unmarshal(sl.NextToken, &one) != nil {
		var many []struct {
			NDecoded *float64 `json:"n_decoded"`
		}
		if json.Unmarshal(sl.NextToken, &many) != nil || len(many) == 0 {
			return 0, false
		}
		one.NDecoded = many[0].NDecoded
	}
	if one.NDecoded == nil || !finite(*one.NDecoded) || *one.NDecoded < 0 {
		return 0, false
	}
	return *one.NDecoded, true
}

// genCounter turns llama.cpp's tokens_predicted_total, which moves only when
// a request ends, into a generated-tokens counter that moves while slots
// generate: finished + Σ busy slots' n_decoded. That sum dips for a moment
// when a request ends between the /metrics and /slots reads (in neither),
// or for good when a client goes away mid-answer (llama.cpp never counts a
// cancelled request's tokens); the store reads any decrease as an engine
// restart, so the counter holds its high-water mark through a dip. A real
// restart — the engine's own counter going back, or the endpoint seen down
// since the last scrape — starts it afresh, and the decrease shows.
type genCounter struct {
	ok       bool
	finished float64 // the engine's counter at the last scrape
	out      float64 // what was reported
}

// next returns the counter for this scrape; restarted says the endpoint was
// down since the last one.
func (g *genCounter) next(finished, inFlight float64, restarted bool) float64 {
	raw := finished + inFlight
	if !g.ok || restarted || finished < g.finished {
		*g = genCounter{ok: true, finished: finished, out: raw}
		return raw
	}
	g.finished, g.out = finished, max(g.out, raw)
	return g.out
}
