package prometheus

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The routers' own word through Prometheus (issue 26): what the engine
// source reads of a router on its /metrics — its per-worker health, rate,
// requests in flight, circuit breaker and consecutive failures, its own
// load range and how often it acted on it, its own queue, its end-to-end
// TTFT — asked of Prometheus in one query for every layer
// (engines.Layer.Workers, RouterQueue, TTFT), so the routing rules judge a
// fleet read through Prometheus as they judge one read directly. Gauges
// are read at the refresh, as a direct scrape reads them; counters and
// histograms over the window (the direct scrape reads them since the
// router started, or across its own scrapes).

// rconcept is one thing asked of a layer: what ("health", "max_load",
// "acts", "queue", "ttft_mean"…), the names it reads (newest first) and
// how.
type rconcept struct {
	what  string
	names []string
	kind  rkind
	// tl is a tenant family's label (rTenant), sum whether the family is
	// a histogram whose sum is read.
	tl  engines.TenantLabel
	sum bool
}

type rkind int

const (
	rWorker rkind = iota // a gauge per worker (label: the layer's worker label)
	rGauge               // one gauge per target
	rActs                // a counter's increase over the window
	rQueue               // a gauge per worker_type
	rTTFT                // a histogram's mean and count over the window
	rTenant              // a tenant family's increase over the window, by the tenant label
)

// tenantSep joins a tenant label's alias and value in one label of the
// answer (label_join): a control character no label value carries.
const tenantSep = `\x1f`

// tenantWhat is a tenant family's concept: by the label's place and the
// family's.
func tenantWhat(i int, fam string) string { return fmt.Sprintf("tenant%d:%s", i, fam) }

// routerConcepts lists what is asked of a layer (none for a layer that sits
// beside an engine, or serves nothing llmtop reads).
func routerConcepts(l *engines.Layer) []rconcept {
	if l.Beside {
		return nil
	}
	var out []rconcept
	if w := l.Workers; w != nil {
		for _, c := range w.Concepts() {
			out = append(out, rconcept{what: c.What, names: c.Names, kind: rWorker})
		}
		if len(w.MaxLoad) > 0 && len(w.MinLoad) > 0 {
			out = append(out, rconcept{what: "max_load", names: w.MaxLoad, kind: rGauge}, rconcept{what: "min_load", names: w.MinLoad, kind: rGauge})
		}
		if len(w.LoadEvents) > 0 {
			out = append(out, rconcept{what: "acts", names: w.LoadEvents, kind: rActs})
		}
	}
	if l.RouterQueue != "" {
		out = append(out, rconcept{what: "queue", names: []string{l.RouterQueue}, kind: rQueue})
	}
	if len(l.TTFT) > 0 {
		out = append(out, rconcept{what: "ttft_mean", names: l.TTFT, kind: rTTFT}, rconcept{what: "ttft_count", names: l.TTFT, kind: rTTFT})
	}
	if src := l.Tenants; src != nil {
		for i, tl := range src.Labels {
			for _, fam := range append([]string{src.Requests, src.Failed}, src.Tokens...) {
				if fam == "" {
					continue
				}
				sum := src.TokenHists && slices.Contains(src.Tokens, fam)
				out = append(out, rconcept{what: tenantWhat(i, fam), names: []string{fam}, kind: rTenant, tl: tl, sum: sum})
			}
		}
	}
	return out
}

// routerConcept is the concept of a layer named what (false when none).
func routerConcept(l *engines.Layer, what string) (rconcept, bool) {
	for _, c := range routerConcepts(l) {
		if c.what == what {
			return c, true
		}
	}
	return rconcept{}, false
}

// routerTag is the concept label of a layer's term: "router:vllm-router:health".
func routerTag(l *engines.Layer, what string) string { return "router:" + l.ID + ":" + what }

// selWith is a selector for name with the user's matchers and more.
func selWith(match, name string, more ...string) string {
	ms := more
	if match != "" {
		ms = append([]string{match}, more...)
	}
	if len(ms) == 0 {
		return name
	}
	return name + "{" + strings.Join(ms, ",") + "}"
}

// routerQuery is one query for every layer's own word over the whole
// fleet: each layer's presence (the names only it serves, grouped by the
// target's labels), then each concept under every name it had.
func routerQuery(match, window string) string {
	var terms []string
	by := "job, instance"
	for _, l := range engines.Layers() {
		cs := routerConcepts(l)
		present := l.FleetNames()
		if len(cs) == 0 || len(present) == 0 {
			continue
		}
		sels := make([]string, len(present))
		for i, n := range present {
			sels[i] = selWith(match, n)
		}
		terms = append(terms, tag(fmt.Sprintf("group by (%s) (%s)", strings.Join(targetLabels, ", "), strings.Join(sels, " or ")), routerTag(l, "present")))
		for _, c := range cs {
			for rank, n := range c.names {
				var expr string
				switch c.kind {
				case rWorker:
					// Every series of a worker gauge names its worker: a
					// series without the label (an engine's, under a name
					// the router shares) is not the router's.
					lbl := l.Workers.Labels[0]
					expr = fmt.Sprintf("max by (%s, %s) (%s)", by, lbl, selWith(match, n, lbl+`!=""`))
					if lbl != "server" {
						expr = fmt.Sprintf(`label_replace(%s, "server", "$1", %q, "(.*)")`, expr, lbl)
					}
				case rGauge:
					expr = fmt.Sprintf("max by (%s) (%s)", by, selWith(match, n))
				case rActs:
					expr = fmt.Sprintf("sum by (%s) (increase(%s[%s]))", by, selWith(match, n), window)
				case rQueue:
					expr = fmt.Sprintf("sum by (%s, %s) (%s)", by, engines.DynamoWorkerType, selWith(match, n))
				case rTenant:
					q := n
					if c.sum {
						q = n + "_sum"
					}
					if c.tl.Alias == "" {
						expr = fmt.Sprintf(`label_replace(sum by (%s, %s) (increase(%s[%s])), "server", "$1", %q, "(.*)")`, by, c.tl.Label, selWith(match, q), window, c.tl.Label)
					} else {
						expr = fmt.Sprintf(`label_join(sum by (%s, %s, %s) (increase(%s[%s])), "server", "%s", %q, %q)`, by, c.tl.Label, c.tl.Alias, selWith(match, q), window,
							tenantSep, c.tl.Alias, c.tl.Label)
					}
				case rTTFT:
					if c.what == "ttft_mean" {
						expr = fmt.Sprintf("sum by (%s) (rate(%s[%s])) / sum by (%s) (rate(%s[%s]))", by, selWith(match, n+"_sum"), window, by, selWith(match, n+"_count"), window)
					} else {
						expr = fmt.Sprintf("sum by (%s) (increase(%s[%s]))", by, selWith(match, n+"_count"), window)
					}
				}
				terms = append(terms, tagFrom(expr, routerTag(l, c.what), n, rank))
			}
		}
	}
	return strings.Join(terms, " or ")
}

// routerData is a router target's own word, as its rows said.
type routerData struct {
	// rows by concept: the name (rank) read, and its rows.
	rank map[string]int
	rows map[string][]sampleRow
}

// addRouters files the router query's rows by target: a target whose
// presence term answered is that layer (a target an engine family found
// too — the production-stack router's shadowed vllm: names — keeps the
// layer its labels classified); each concept keeps the rows of the newest
// name the target serves.
func (fl *fleet) addRouters(rs []sampleRow) {
	for _, r := range rs {
		ly, what, ok := routerOf(r.labels.Concept)
		if !ok || what != "present" || keyOf(r.labels) == (tkey{}) {
			continue
		}
		e := fl.ep(family{engine: model.Unknown}, r.labels)
		e.readLabels(r.labels)
		if e.layer == nil {
			e.layer = ly
		}
		if e.router == nil {
			e.router = &routerData{rank: map[string]int{}, rows: map[string][]sampleRow{}}
		}
	}
	for _, r := range rs {
		ly, what, ok := routerOf(r.labels.Concept)
		if !ok || what == "present" {
			continue
		}
		e := fl.found(keyOf(r.labels))
		if e == nil || e.layer != ly || e.router == nil {
			continue
		}
		c, ok := routerConcept(ly, what)
		if !ok {
			continue
		}
		rank := entry{names: c.names}.rank(r.labels.From)
		if rank < 0 {
			continue
		}
		rd := e.router
		if prev, had := rd.rank[what]; had && prev < rank {
			continue // it serves a newer name of this
		} else if had && prev > rank {
			rd.rows[what] = nil
		}
		rd.rank[what] = rank
		rd.rows[what] = append(rd.rows[what], r)
	}
}

// routerOf cuts a router concept into its layer and what.
func routerOf(concept string) (*engines.Layer, string, bool) {
	rest, ok := strings.CutPrefix(concept, "router:")
	if !ok {
		return nil, "", false
	}
	id, what, ok := strings.Cut(rest, ":")
	if !ok {
		return nil, "", false
	}
	l := engines.LayerOf(id)
	return l, what, l != nil
}

// name is the name a concept was read under ("" when it did not answer).
func (rd *routerData) name(l *engines.Layer, what string) string {
	c, ok := routerConcept(l, what)
	r, had := rd.rank[what]
	if !ok || !had || r >= len(c.names) || len(rd.rows[what]) == 0 {
		return ""
	}
	return c.names[r]
}

// one is a concept's single value (false when it did not answer or is not
// a number).
func (rd *routerData) one(what string) (float64, bool) {
	rows := rd.rows[what]
	if len(rows) == 0 || !finite(rows[0].v) {
		return 0, false
	}
	return rows[0].v, true
}

// identify puts the router's word into its scrape's identity, as the
// engine source does from its /metrics; w is the window of the counters
// and histograms, now the refresh.
func (rd *routerData) identify(l *engines.Layer, id *model.Identity, w time.Duration, now time.Time) {
	var set engines.BackendSet
	if l.Workers != nil {
		for _, c := range l.Workers.Concepts() {
			n := rd.name(l, c.What)
			if n == "" {
				continue
			}
			set.Read(n)
			for _, r := range rd.rows[c.What] {
				set.Set(c.What, model.Clean(r.labels.get("server")), r.v)
			}
		}
	}
	id.Backends = set.List()
	if hi, ok := rd.one("max_load"); ok {
		if lo, ok := rd.one("min_load"); ok {
			lr := &model.LoadRange{Max: hi, Min: lo, From: rd.name(l, "max_load") + ", " + rd.name(l, "min_load")}
			if n, ok := rd.one("acts"); ok && n >= 0 {
				lr.Events, lr.EventsOK, lr.EventsWindow = n, true, w
				lr.From += ", " + rd.name(l, "acts")
				if n > 0 {
					lr.ActedAt = now // within the window: the range is now's
				}
			}
			id.LoadRange = lr
		}
	}
	for _, r := range rd.rows["queue"] {
		if finite(r.v) {
			id.RouterQueue = append(id.RouterQueue, model.RouterQueued{WorkerType: model.Clean(r.labels.get("worker_type")), Pending: r.v})
		}
	}
	sort.Slice(id.RouterQueue, func(i, j int) bool { return id.RouterQueue[i].WorkerType < id.RouterQueue[j].WorkerType })
	word := "workers"
	if l == &engines.ProdStackRouter {
		word = "servers"
	}
	d := engines.WorkersDetail(word, id.Backends)
	mean, okMean := rd.one("ttft_mean")
	count, okCount := rd.one("ttft_count")
	if okMean && okCount && count > 0 && mean >= 0 {
		if d != "" {
			d += "; "
		}
		d += engines.TTFTDetail(mean, count, "in the last "+w.String())
	}
	if src := l.Tenants; src != nil && len(rd.rows[tenantWhat(0, src.Requests)]) > 0 {
		ts, unnamed := src.Tally(func(tl engines.TenantLabel, fam string) []engines.TenantRow {
			i := slices.Index(src.Labels, tl)
			var out []engines.TenantRow
			for _, r := range rd.rows[tenantWhat(i, fam)] {
				v := r.labels.get("server")
				get := func(lbl string) string {
					if tl.Alias == "" {
						if lbl == tl.Label {
							return model.Clean(v)
						}
						return ""
					}
					alias, val, _ := strings.Cut(v, "\x1f")
					switch lbl {
					case tl.Alias:
						return model.Clean(alias)
					case tl.Label:
						return model.Clean(val)
					}
					return ""
				}
				out = append(out, engines.TenantRow{Get: get, V: r.v})
			}
			return out
		})
		id.Tenants = ts
		if d != "" {
			d += "; "
		}
		d += src.Detail(ts, unnamed, "in the last "+w.String())
	}
	id.LayerDetail = d
}
