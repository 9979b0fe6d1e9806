package diagnosis

import (
	"fmt"
	"math"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The KV hand-over in detail (issue 26, Build 3): how fast the KV moves,
// requests whose KV expired on the prefill side before the decode side
// read it, and SGLang's hand-over queues. They are evidence for
// kv_transfer_stall and pd_imbalance, and expiries a finding of their own.
func init() {
	register(rule{id: "kv_transfer_expired", checks: "no prefill instance lets a request's KV expire before the decode side reads it",
		needs: needMetrics, hold: holdRoute, eval: ruleKVTransferExpired})
}

// kvBandwidth is the rate KV moved at while it moved: the bytes moved over
// the window over the time the transfers took in it (vLLM's own
// throughput: total bytes over total transfer time), in bytes/s.
func kvBandwidth(st model.State) (float64, bool) {
	xfer := st.Latency[model.KVTransfer]
	if !st.KVBytesPS.OK || !xfer.Mean.OK || xfer.Count <= 0 || xfer.Window <= 0 {
		return 0, false
	}
	busy := xfer.Mean.V * xfer.Count / xfer.Window.Seconds() // transfer-seconds per second
	if busy <= 0 {
		return 0, false
	}
	return st.KVBytesPS.V / busy, true
}

// gbps writes a rate in bytes/s as GB/s (or MB/s under one).
func gbps(bps float64) string {
	if bps < 1e9 {
		return fmt.Sprintf("%.0f MB/s", bps/1e6)
	}
	return fmt.Sprintf("%.1f GB/s", bps/1e9)
}

// kvDetail is the hand-over evidence an instance serves beyond its
// transfer time: the rate the KV moved at, and SGLang's queues.
func kvDetail(ep Endpoint) []Evidence {
	st := ep.State
	var out []Evidence
	if bw, ok := kvBandwidth(st); ok {
		out = append(out, Evidence{Text: fmt.Sprintf("%s: KV moved at %s while transferring (%s moved in the window, over the transfers' own time)",
			ep.URL, gbps(bw), bytesText(st.KVBytesPS.V*st.RateWindow.Seconds())),
			Source: st.From[string(model.KVTransferBytes)] + ", " + st.From[string(model.KVTransfer)], Window: st.RateWindow})
	}
	queue := func(q model.Opt, g model.Gauge, what string) {
		if q.OK && q.V > 0 {
			out = append(out, Evidence{Text: fmt.Sprintf("%s: %s requests %s", ep.URL, num(q.V), what), Source: st.From[string(g)]})
		}
	}
	queue(st.BootstrapQ, model.PDBootstrapQueue, "wait for the handshake with their decode peer (bootstrap queue)")
	queue(st.PreallocQ, model.PDPreallocQueue, "wait for KV space to receive into (prealloc queue)")
	queue(st.TransferQ, model.PDTransferQueue, "poll for their KV (transfer queue)")
	return out
}

// bytesText writes a byte count in GB or MB.
func bytesText(b float64) string {
	if b >= 1e9 {
		return fmt.Sprintf("%.1f GB", b/1e9)
	}
	return fmt.Sprintf("%.0f MB", b/1e6)
}

// ruleKVTransferExpired: a prefill instance let requests' KV expire before
// the decode side read it (vLLM counts these on the prefill instance):
// each one's prefill was done for nothing, and the request fails or is
// computed again on the decode side.
func ruleKVTransferExpired(e *env) []Finding {
	var out []Finding
	judged := 0
	defer func() { e.idle = judged == 0 }()
	for ep := range each(e.withMetrics()) {
		r := ep.State.KVExpiredPS
		if !r.OK {
			continue // no expiry counted here: not a NIXL prefill instance
		}
		judged++
		if r.V <= 0 {
			continue
		}
		n := math.Max(1, math.Round(r.V*ep.State.RateWindow.Seconds()))
		ev := []Evidence{{Text: fmt.Sprintf("%s requests' KV expired on this instance before the decode side read it (%s/s)", num(n), num(r.V)),
			Source: ep.State.From[string(model.KVExpired)], Window: ep.State.RateWindow}}
		// The decode side of the same model, as its own metrics say.
		_, _, decode := e.pdPools()
		for _, d := range decode[ep.Model()] {
			ev = append(ev, Evidence{Text: memberLine(*d), Source: "the decode side's running/waiting/KV"})
		}
		if len(decode[ep.Model()]) == 0 {
			ev = append(ev, Evidence{Text: "no decode instance of " + ep.Model() + " is watched: whether the decode side is down, full or slow is not checked"})
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Routing, Severity: model.SevWarn,
			Title:    fmt.Sprintf("KV expired on the prefill side before the decode side read it: %s requests in the window", num(n)),
			Evidence: ev,
			Cause: "the decode side never read these requests' KV within the prefill's timeout: a decode instance down, restarted or too " +
				"full to take them, the router's decode request lost, or a transfer path that stalls; the prefill freed the blocks, so " +
				"the work was done for nothing and the request fails or is computed again",
			Actions: []Action{
				{Change: "check the decode pool and " + engines.KVTransferCheck, Why: "an expiry means the decode side did not read in time", TradeOff: "none"},
				{Change: "only if the decode side is healthy but slow: raise " + engines.VLLMNixlAbortTimeout + " (480 s by default) on the prefill instances",
					Why: "the KV then waits longer for a slow reader", TradeOff: "a dead reader holds prefill KV blocks longer"},
			}})
	}
	return out
}
