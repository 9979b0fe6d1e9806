package engine

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// role is what an endpoint's metric families say it is, decided before any
// engine prefix is trusted (issue 26): the production-stack router serves
// vllm: gauges of its own, and a scrape that takes them for an engine's
// calls the router an engine.
type role struct {
	Role engines.Role
	// Layer is the serving layer it is (nil: a plain engine).
	Layer *engines.Layer
	// Beside are layers whose families sit beside an engine's on its
	// endpoint (LMCache as vLLM's KV connector).
	Beside []*engines.Layer
	// Why is the evidence: the families (and labels) that matched.
	Why string
	// Counted are the families the layer's numbers come from, each
	// deprecated family whose current twin is present left out (llm-d's
	// picker emits both during the rename: counted once).
	Counted families
	// Twins are the deprecated families left out, old → current.
	Twins map[string]string
}

// deprecatedUse is the HELP text llm-d's picker puts on an old family:
// "[Deprecated: Use llm_d_epp_request_total]".
var deprecatedUse = regexp.MustCompile(`\[Deprecated: Use ([a-zA-Z_:][a-zA-Z0-9_:]*)\]`)

// classifyRole classifies an endpoint from its families: a serving layer
// that stands in front of engines (router, proxy) wins over any engine
// prefix; a layer that sits beside an engine is noted; otherwise it is an
// engine.
func classifyRole(f families) role {
	for _, l := range engines.Layers() {
		if l.Beside {
			continue
		}
		if why := layerEvidence(l, f); why != "" {
			counted, twins := countOnce(l, f)
			return role{Role: l.Role, Layer: l, Why: why, Counted: counted, Twins: twins}
		}
	}
	engine := engineFamilies(f)
	r := role{Role: engines.RoleEngine, Counted: f}
	for _, l := range engines.Layers() {
		if !l.Beside {
			continue
		}
		if why := layerEvidence(l, f); why != "" {
			if !engine {
				counted, twins := countOnce(l, f)
				return role{Role: l.Role, Layer: l, Why: why, Counted: counted, Twins: twins}
			}
			r.Beside = append(r.Beside, l)
			r.Why = why
		}
	}
	return r
}

// engineFamilies reports whether any family carries an engine's prefix.
func engineFamilies(f families) bool {
	for name := range f {
		if engines.ByMetricName(name) != nil {
			return true
		}
	}
	return false
}

// layerEvidence names what gives a layer away in f ("" when nothing does).
func layerEvidence(l *engines.Layer, f families) string {
	var own []string
	for name := range f {
		if l.Owns(name) || l.Owns(unwrapName(name)) {
			own = append(own, name)
		}
	}
	if len(own) > 0 {
		sort.Strings(own)
		return "families " + short(own)
	}
	return shadowEvidence(l, f)
}

// shadowEvidence names the engine families l reuses that f has as l
// serves them (labelled its way): "" when none, or l reuses none.
func shadowEvidence(l *engines.Layer, f families) string {
	s := l.Shadow
	if s == nil {
		return ""
	}
	var shadowed []string
	for _, n := range s.Names {
		if fam, ok := f[n]; ok && len(fam.GetMetric()) > 0 && allLabelled(fam.GetMetric(), s.Label, s.Lacks) {
			shadowed = append(shadowed, n)
		}
	}
	if len(shadowed) > 0 {
		return fmt.Sprintf("%s labelled %s, without %s", short(shadowed), s.Label, s.Lacks)
	}
	return ""
}

// unwrapName cuts a wrapping layer's prefix (KServe's kserve_) off a name:
// the picker's families scraped through KServe are still the picker's.
func unwrapName(name string) string {
	for _, p := range engines.WrapperPrefixes() {
		if strings.HasPrefix(name, p) {
			return strings.TrimPrefix(name, p)
		}
	}
	return name
}

// allLabelled reports whether every series carries label and none carries
// lacks.
func allLabelled(ms []*dto.Metric, lbl, lacks string) bool {
	for _, m := range ms {
		if label(m, lbl) == "" || (lacks != "" && label(m, lacks) != "") {
			return false
		}
	}
	return true
}

// countOnce leaves out each deprecated family whose current twin is in f
// (by the layer's table, or by the family's own HELP "[Deprecated: Use
// X]"): a picker that emits both is counted once.
func countOnce(l *engines.Layer, f families) (families, map[string]string) {
	out := families{}
	twins := map[string]string{}
	for name, fam := range f {
		twin := l.Twin(name)
		if m := deprecatedUse.FindStringSubmatch(fam.GetHelp()); m != nil {
			twin = m[1]
		}
		if twin != "" && twin != name {
			if _, ok := f[twin]; ok {
				twins[name] = twin
				continue
			}
		}
		out[name] = fam
	}
	return out, twins
}

// short lists at most three names.
func short(ns []string) string {
	if len(ns) > 3 {
		return strings.Join(ns[:3], ", ") + fmt.Sprintf(" and %d more", len(ns)-3)
	}
	return strings.Join(ns, ", ")
}

// layerError is what a scrape of a serving layer reports: what it is and
// why llmtop thinks so, that llmtop does not judge it yet, and where the
// engines are. Nothing of it is read as an engine's numbers.
func layerError(url string, r role) *scrapeError {
	msg := fmt.Sprintf("%s is a %s, not an engine (%s): %s", url, r.Layer.What(), r.Why, r.Layer.Judged())
	hint := "point llmtop at the engines behind it (their own /metrics), or at the Prometheus that scrapes them (--prometheus)"
	return &scrapeError{model.ErrNotFound, msg, hint}
}

// layerAt reads the metrics route of an endpoint no engine fingerprint
// matched and names the serving layer its families give away (nil when
// none does, or when the route cannot be read: then the endpoint stays
// "not recognised").
func (s *session) layerAt(ctx context.Context, now time.Time, id *model.Identity) *scrapeError {
	path := s.cfg.MetricsPath
	if path == "" {
		path = "/metrics"
	}
	c := &collector{ctx: ctx, s: s, now: now, id: &model.Identity{}}
	fams, err := c.prom(path)
	if err != nil {
		return nil
	}
	if r := classifyRole(fams); r.Role != engines.RoleEngine {
		s.identify(r, id, now)
		return layerError(s.cfg.URL+path, r)
	}
	return nil
}

// besideNotes say which layers sit beside the engine on its endpoint (a
// Dynamo worker's dynamo_component_*, LMCache as vLLM's KV connector).
func (r role) besideNotes() []string {
	var out []string
	for _, l := range r.Beside {
		out = append(out, "served beside "+l.Name+" ("+r.Why+")")
	}
	return out
}

// pdRole reads an endpoint's prefill/decode role from its series: a role
// label (SGLang's engine_type, KServe's llm_isvc_role, Dynamo's
// worker_type), else the side-specific KV transfer counters vLLM counts
// where the transfer happens (a decode instance pulls: NIXL transfers and
// prompt tokens from external_kv_transfer above zero). Unknown ("") when
// nothing says: a counter that is absent or zero is not a role.
func pdRole(f families) (model.PDRole, string) {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, m := range f[n].GetMetric() {
			for _, l := range m.GetLabel() {
				if r, ok := engines.PDRoleOf(l.GetName(), l.GetValue()); ok {
					return r, fmt.Sprintf("%s{%s=%q}", n, l.GetName(), l.GetValue())
				}
			}
		}
	}
	for _, n := range []string{engines.VLLMNixlXferTime + "_count", engines.VLLMNixlXferTime} {
		if fam, ok := f[n]; ok {
			for _, m := range fam.GetMetric() {
				if h := m.GetHistogram(); h != nil && h.GetSampleCount() > 0 {
					return model.RoleDecode, engines.VLLMNixlXferTime + " counts transfers (decode pulls the KV)"
				}
			}
		}
	}
	// The NIXL connector configured (its transfer histogram served), no
	// transfer performed here while requests finished: the prefill side,
	// whose KV the decode side pulls.
	if fam, ok := f[engines.VLLMNixlXferTime]; ok && len(fam.GetMetric()) > 0 {
		var xfers, done float64
		for _, m := range fam.GetMetric() {
			xfers += float64(m.GetHistogram().GetSampleCount())
		}
		if succ, ok := f[engines.VLLMRequestSuccess]; ok {
			for _, m := range succ.GetMetric() {
				done += scalar(m)
			}
		}
		if xfers == 0 && done > 0 {
			return model.RolePrefill, fmt.Sprintf("%s served with no transfer while %.0f requests finished (the decode side pulls the KV)", engines.VLLMNixlXferTime, done)
		}
	}
	if fam, ok := f[engines.VLLMPromptBySource]; ok {
		for _, m := range fam.GetMetric() {
			if label(m, "source") == engines.VLLMExternalKV && scalar(m) > 0 {
				return model.RoleDecode, engines.VLLMPromptBySource + `{source="` + engines.VLLMExternalKV + `"} above zero`
			}
		}
	}
	return "", ""
}

// routerQueue is a router's own queue by worker type: Dynamo's frontend
// serves dynamo_frontend_router_queue_pending_requests{worker_type} only
// with --router-queue-threshold (nil when it does not).
func routerQueue(r role) []model.RouterQueued {
	if r.Layer.RouterQueue == "" {
		return nil
	}
	fam, ok := r.Counted[r.Layer.RouterQueue]
	if !ok {
		return nil
	}
	var out []model.RouterQueued
	for _, m := range fam.GetMetric() {
		if v := scalar(m); finite(v) {
			out = append(out, model.RouterQueued{WorkerType: label(m, engines.DynamoWorkerType), Pending: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].WorkerType < out[j].WorkerType })
	return out
}

// routerTTFT is a router's own end-to-end time to first token, the mean
// over every request it counted since it started (its histogram's sum over
// its count, all series): what the user waits across prefill and decode,
// beside each instance's own TTFT. "" when it serves none or counted none.
func routerTTFT(r role) string {
	for _, name := range r.Layer.TTFT {
		fam, ok := r.Counted[name]
		if !ok {
			continue
		}
		var sum, n float64
		for _, m := range fam.GetMetric() {
			if h := m.GetHistogram(); h != nil && finite(h.GetSampleSum()) {
				sum += h.GetSampleSum()
				n += float64(h.GetSampleCount())
			}
		}
		if n == 0 {
			return ""
		}
		return engines.TTFTDetail(sum/n, n, "since start")
	}
	return ""
}
