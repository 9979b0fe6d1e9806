package tui

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// The fleet's topology (issue 26): with a router or a prefill/decode role
// among the endpoints, the table groups its rows router → pools →
// workers. A pool is one model and one role; its heading gives the spread
// of its members (queue, KV, running, TTFT), the numbers a router's skew
// shows in, and for a decode pool whether KV is handed over at all.

// poolOf names a row's group and the key it sorts by: routers first, then
// each model's prefill, decode and unified pools.
func poolOf(r *fleetRow) (key, name string) {
	if r.layer != "" {
		return "0", "routers"
	}
	order := "2"
	switch r.role {
	case model.RolePrefill:
		order = "0"
	case model.RoleDecode:
		order = "1"
	}
	name = r.modelName
	if name == "" {
		name = "(model unknown)"
	}
	if r.role != "" {
		name += " · " + string(r.role)
	}
	return "1" + r.modelName + "\x00" + order, name
}

// topologyShown reports whether any row is a router or has a role: the
// view then starts grouped by pool.
func topologyShown(rows []fleetRow) bool {
	for i := range rows {
		if rows[i].layer != "" || rows[i].role != "" {
			return true
		}
	}
	return false
}

// sortPools orders the rows by pool, keeping the chosen order inside each.
func sortPools(rows []fleetRow) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].poolKey < rows[j].poolKey })
}

// span is "lo–hi" of the members' values, "--" when none is known.
func span(vals []model.Opt, f func(model.Opt) string) string {
	var lo, hi model.Opt
	for _, v := range vals {
		if !v.OK {
			continue
		}
		if !lo.OK || v.V < lo.V {
			lo = v
		}
		if !hi.OK || v.V > hi.V {
			hi = v
		}
	}
	if !lo.OK {
		return "--"
	}
	if a, b := f(lo), f(hi); a != b {
		return a + "–" + b
	}
	return f(lo) // "KV 0%", not "0%–0%" of 0.01 % and 0.03 %
}

// poolLine heads a pool: its members, how many serve, and the spread of
// what a router's skew shows in. It is the whole pool's, whatever the
// filter hides: filtered to one idle worker, a decode pool of five read
// "1/1 serving · KV hand-over: no verdict yet".
func (v *fleetView) poolLine(d *Data, key, name string) string {
	var n, serving, shown int
	var run, wait, kv, ttft, prompt []model.Opt
	var rows []*fleetRow
	for _, i := range v.shown {
		if v.rows[i].poolKey == key {
			shown++
		}
	}
	for i := range v.rows {
		r := &v.rows[i]
		if r.poolKey != key {
			continue
		}
		n++
		if r.state == "serving" {
			serving++
		}
		rows = append(rows, r)
		run, wait, kv, ttft = append(run, r.running), append(wait, r.waiting), append(kv, r.kv), append(ttft, r.ttft)
		prompt = append(prompt, r.promptTPS)
	}
	if key == "0" {
		// Tenants only where a layer counts them (LiteLLM's team, key or
		// user labels): never a guess from anything else.
		tenants := " · no tenant source"
		for _, r := range rows {
			if r.tenants || strings.Contains(r.detail, "tenant source") {
				tenants = ""
			}
		}
		if n == 1 && (rows[0].detail != "" || rows[0].overhead != "") {
			// What the one router says of its engines, beside what the
			// engines say in the pools below; judged where the routing
			// rules read its word (dead_backend_traffic, router_bottleneck,
			// router_overhead). Its own overhead beside the engines' TTFT.
			judged := " (not judged yet)"
			if rows[0].judged {
				judged = ""
			}
			// its own overhead first where it reports one, beside the
			// engines' TTFT (the comparison the line is for); "not
			// reported" after its word on its engines
			var word string
			if o := rows[0].overhead; o != "" && o != overheadNotReported {
				word = o
				if e := enginesTTFT(v); e != "" {
					word += " · engines' TTFT99 " + e
				}
				word = joinNonEmpty(" · ", word, rows[0].detail)
			} else {
				word = joinNonEmpty(" · ", rows[0].detail, o)
			}
			return fmt.Sprintf("▸ %s · %s%s%s", name, word, judged, tenants)
		}
		return fmt.Sprintf("▸ %s · %d · in front of the pools below (not judged yet)%s", name, n, tenants)
	}
	parts := []string{fmt.Sprintf("▸ %s · %d/%d serving", name, serving, n)}
	if shown < n {
		parts[0] += fmt.Sprintf(" (%d shown)", shown)
	}
	if strings.HasSuffix(name, "· "+string(model.RoleDecode)) {
		parts = append(parts, kvVerdict(d, rows))
	}

	w := "wait " + span(wait, fmtNum)
	if c, ok := spread(wait); ok {
		w += fmt.Sprintf(" (CV %.1f)", c)
	}
	parts = append(parts, w, "KV "+span(kv, fmtPct), "run "+span(run, fmtNum), "TTFT99 "+span(ttft, fmtSec))
	if strings.HasSuffix(name, "· "+string(model.RolePrefill)) {
		// a prefill instance answers with one token: its TOK/S (generated)
		// reads ~10 while it reads thousands of prompt tokens a second
		parts = append(parts, "prompt "+span(prompt, fmtNum)+" tok/s")
	}
	return strings.Join(parts, " · ")
}

// kvVerdict says whether a decode pool receives KV from prefill over the
// window: transfers counted, none counted while it finished requests (held
// until its members have run a whole window, since a decode instance
// counts nothing before its first request), or no transfer histogram at
// all (absent is not zero: no verdict).
func kvVerdict(d *Data, rows []*fleetRow) string {
	var count, reqs float64
	var span time.Duration // the longest any member's count covers
	exposed, young, sent := false, false, false
	for _, r := range rows {
		sent = sent || r.kvSent
		if !r.xfer.Exposed {
			continue
		}
		exposed = true
		count += r.xfer.Count
		span = max(span, r.xfer.Window)
		reqs += r.reqs.Or(0)
		if r.young {
			young = true
		}
	}
	if span <= 0 || span > d.Window {
		span = d.Window
	}
	switch {
	case sent && count == 0:
		// SGLang counts its transfers where they are sent: a decode
		// instance's zero says nothing (the prefill pool's line has them)
		return "KV hand-over: counted on the prefill side"
	case !exposed:
		return "KV hand-over: not exposed"
	case count > 0:
		return fmt.Sprintf("KV handed over: %s in %s", fmtNum(model.Some(count)), fmtDur(span))
	case young || reqs == 0:
		return "KV hand-over: no verdict yet"
	}
	return "no KV handed over in " + fmtDur(span) + ": not disaggregating?"
}

// spread is the coefficient of variation of three or more known values
// (false when fewer, or their mean is 0): how unevenly a pool's queues sit.
func spread(vals []model.Opt) (float64, bool) {
	var xs []float64
	for _, v := range vals {
		if v.OK {
			xs = append(xs, v.V)
		}
	}
	if len(xs) < 3 {
		return 0, false
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0, false
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs))) / mean, true
}

// enginesTTFT is the span of the shown engines' own TTFT p99 ("" when no
// engine has one): what the router's overhead is set beside.
func enginesTTFT(v *fleetView) string {
	var ttft []model.Opt
	for i := range v.rows {
		if r := &v.rows[i]; r.layer == "" && r.ttft.OK {
			ttft = append(ttft, r.ttft)
		}
	}
	if len(ttft) == 0 {
		return ""
	}
	return span(ttft, fmtSec)
}

// overheadNotReported is a router's line where its layer reports no
// overhead of its own.
const overheadNotReported = "own overhead not reported"

// overheadText is a router's word on its own added latency, short: its
// mean per request over the window and its share of the time to first
// token; "not reported" where the layer has none, never a zero.
func overheadText(o *model.RouterOverhead) string {
	switch {
	case o == nil:
		return ""
	case o.Missing != "":
		return overheadNotReported
	case o.Requests <= 0:
		return "own overhead: no requests" + overheadOver(o)
	}
	t := "own overhead " + fmtSec(model.Some(o.Mean)) + "/req"
	if share, ttft, ok := o.Share(); ok {
		t += fmt.Sprintf(" (%s of TTFT %s)", fmtSharePct(share), fmtSec(model.Some(ttft)))
	}
	return t + overheadOver(o)
}

// overheadOver says what the overhead's means are over.
func overheadOver(o *model.RouterOverhead) string {
	if o.Window > 0 {
		return " over " + fmtDur(o.Window)
	}
	return " since start"
}

// fmtSharePct writes a share as a percentage, a decimal under 10 %.
func fmtSharePct(x float64) string {
	if x < 0.1 {
		return fmt.Sprintf("%.1f%%", x*100)
	}
	return fmt.Sprintf("%.0f%%", x*100)
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
