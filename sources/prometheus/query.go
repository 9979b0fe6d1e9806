package prometheus

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// targetLabels identify a target: a Prometheus job and instance, and the
// Kubernetes pod and namespace under the names the usual relabelling
// configs give them.
var targetLabels = []string{"job", "instance", "pod", "namespace", "kubernetes_pod_name", "kubernetes_namespace"}

// roleLabels are what the "labels" term groups by: the target's labels,
// the model, each prefill/decode role label (engines.PDLabels), and the
// label of each router that serves an engine's names as its own
// (engines.Layer.Shadow: the production-stack router's server), so a
// target is classified as the single-endpoint path classifies it.
func roleLabels() []string {
	out := append(append([]string{}, targetLabels...), "model_name")
	out = append(out, engines.PDLabels()...)
	for _, l := range engines.Layers() {
		if l.Shadow != nil && !slices.Contains(out, l.Shadow.Label) {
			out = append(out, l.Shadow.Label)
		}
	}
	return out
}

// conceptLabel is the label each term of a combined query is tagged with,
// so one query returns every concept of a family for the whole fleet.
const conceptLabel = "llmtop_concept"

// fromLabel is the label each term is tagged with the metric name it read.
const fromLabel = "llmtop_from"

// quantiles are the percentiles asked of Prometheus.
var quantiles = []struct {
	q    float64
	name string
}{{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}}

// quantiled are the latencies asked for percentiles; the others (E2E, the
// queue) get their mean and count only.
var quantiled = map[model.Latency]bool{model.TTFT: true, model.TPOT: true, model.ITL: true}

// promDuration writes d as a PromQL duration (whole seconds).
func promDuration(d time.Duration) string {
	s := int64(d / time.Second)
	if s < 1 {
		s = 1
	}
	if s%60 == 0 {
		return fmt.Sprintf("%dm", s/60)
	}
	return fmt.Sprintf("%ds", s)
}

// normMatch turns --match into the inside of a selector's braces:
// `namespace="prod"`, `{namespace="prod"}` and "" are accepted. Outside
// the quoted values only label matchers may appear (no braces, brackets or
// parentheses: the matchers are pasted into every query); inside them a
// regex may hold anything.
func normMatch(m string) (string, error) {
	m = strings.TrimSpace(m)
	if strings.HasPrefix(m, "{") && strings.HasSuffix(m, "}") {
		m = strings.TrimSpace(m[1 : len(m)-1])
	}
	quote := rune(0)
	escaped := false
	for _, c := range m {
		switch {
		case escaped:
			escaped = false
		case quote != 0 && c == '\\':
			escaped = true
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case strings.ContainsRune("{}[]()", c):
			return "", fmt.Errorf("--match %q: want label matchers such as namespace=\"prod\",job=~\"vllm-.*\" (no braces, brackets or functions outside the quotes)", m)
		}
	}
	if quote != 0 {
		return "", fmt.Errorf("--match %q: a quote is not closed", m)
	}
	return m, nil
}

// builder writes a family's queries with the user's matchers and window.
type builder struct {
	f      family
	match  string
	window string
}

// by groups by target and model only: the pod and namespace labels come
// once per target (the "labels" term), not on every number, which keeps a
// 500-target answer small enough to decode in a few milliseconds.
func (b builder) by(extra ...string) string {
	return "by (" + strings.Join(append(engines.Of(b.f.engine).RuleBy(), extra...), ", ") + ")"
}

// gsel is a gauge's selector: with the engine's matcher for its total
// series where it writes a breakdown beside it (engines.Spec.TotalMatch).
func (b builder) gsel(name string) string {
	if t := engines.Of(b.f.engine).TotalMatch; t != "" {
		return selWith(b.match, name, t)
	}
	return b.sel(name)
}

func (b builder) sel(name string) string {
	if b.match == "" {
		return name
	}
	return name + "{" + b.match + "}"
}

func tag(expr, concept string) string {
	return fmt.Sprintf(`label_replace(%s, %q, %q, "", "")`, expr, conceptLabel, concept)
}

// tagFrom tags a term with its concept and, when it reads an older name
// (rank > 0), that name, so one query asks every name a concept had across
// releases and the answer says which one each endpoint serves. The newest
// name goes untagged: an answer from a current release is no larger.
func tagFrom(expr, concept, name string, rank int) string {
	if rank == 0 {
		return tag(expr, concept)
	}
	return fmt.Sprintf(`label_replace(%s, %q, %q, "", "")`, tag(expr, concept), fromLabel, name)
}

// anyOf selects a series of any of the names: `or` keeps both sides'
// series (they differ in __name__), and the aggregation around it drops
// the name.
func (b builder) anyOf(names []string) string {
	sels := make([]string, len(names))
	for i, n := range names {
		sels[i] = b.sel(n)
	}
	if len(sels) == 1 {
		return sels[0]
	}
	return "(" + strings.Join(sels, " or ") + ")"
}

// stateQuery is one query for every gauge, rate and ratio of the family
// over the whole fleet: instant gauges, rate() over the window, each under
// every name the table lists for it.
func (b builder) stateQuery() string {
	var terms []string
	for _, g := range b.f.gauges {
		agg := "sum"
		if g.key == string(model.KVUsage) {
			agg = b.f.kvAgg // a ratio per engine: never a sum
		}
		for i, n := range g.names {
			terms = append(terms, tagFrom(fmt.Sprintf("%s %s (%s)", agg, b.by(), b.gsel(n)), "gauge:"+g.key, n, i))
		}
	}
	for _, c := range b.f.counters {
		for i, n := range c.names {
			q := n
			if c.sum {
				q = n + "_sum"
			}
			terms = append(terms, tagFrom(c.scaled(b.rate(q)), "rate:"+c.key, n, i))
		}
	}
	for _, r := range b.f.ratios {
		for i, n := range r.names {
			terms = append(terms, tagFrom(b.rate(n)+" / "+b.rate(r.pair[i]), "ratio:"+r.key, n, i))
		}
	}
	present := b.anyOf(b.f.present)
	terms = append(terms, tag(fmt.Sprintf("group by (%s) (%s)", strings.Join(roleLabels(), ", "), present), "labels"))
	// The process start time, when the target serves it, tells a window
	// that spans a restart.
	terms = append(terms, tag(fmt.Sprintf("max by (job, instance) (%s and on (job, instance) %s)",
		b.sel("process_start_time_seconds"), present), "started"))
	return strings.Join(terms, " or ")
}

func (b builder) rate(name string) string {
	return fmt.Sprintf("sum %s (rate(%s[%s]))", b.by(), b.sel(name), b.window)
}

// latencyQuery is one query for every latency of the family: p50, p90,
// p99 by histogram_quantile over the window, the mean and the count, under
// every name the table lists for the histogram.
func (b builder) latencyQuery() string {
	var terms []string
	for _, l := range b.f.hists {
		for i, h := range l.names {
			for _, q := range quantiles {
				if !quantiled[model.Latency(l.key)] {
					break // a mean and a count: every quantile is a series per target, and 500 targets decode slowly
				}
				terms = append(terms, tagFrom(l.scaled(fmt.Sprintf("histogram_quantile(%g, sum %s (rate(%s[%s])))",
					q.q, b.by("le"), b.sel(h+"_bucket"), b.window)), "lat:"+l.key+":"+q.name, h, i))
			}
			terms = append(terms, tagFrom(l.scaled(b.rate(h+"_sum")+" / "+b.rate(h+"_count")), "lat:"+l.key+":mean", h, i))
			terms = append(terms, tagFrom(fmt.Sprintf("sum %s (increase(%s[%s]))", b.by(), b.sel(h+"_count"), b.window), "lat:"+l.key+":count", h, i))
		}
	}
	return strings.Join(terms, " or ")
}

// upQuery is Prometheus's own word on each target's last scrape, for the
// jobs engine targets were found in (a large Prometheus scrapes thousands
// of other targets llmtop has no use for).
func upQuery(match string, jobs []string) string {
	quoted := make([]string, len(jobs))
	for i, j := range jobs {
		quoted[i] = regexp.QuoteMeta(j)
	}
	sel := "job=~" + strconv.Quote("^(?:"+strings.Join(quoted, "|")+")$")
	if match != "" {
		sel = match + "," + sel
	}
	return "up{" + sel + "}"
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
