package prometheus

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmtop/llmtop/engines"
)

// fakeProm answers the Prometheus HTTP API (/api/v1/query) the way a real
// server does — the response envelope, vector shape, error types and
// warnings of https://prometheus.io/docs/prometheus/latest/querying/api/
// (Prometheus 2.42, the version Debian ships and the real check in
// scripts/prometheus-fleet-check.sh uses) — but it does not evaluate
// PromQL: it returns, for each endpoint it holds, the value it was given
// for each concept the query tags with label_replace. It tests the source's
// discovery, parsing, errors and scale; the real Prometheus checks the
// queries themselves.
type fakeProm struct {
	mu       sync.Mutex
	eps      []fakeEP
	up       map[string]float64 // by instance; missing: not a target
	status   int                // non-zero: answer this HTTP status with an API error
	errType  string
	delay    time.Duration
	warnings []string
	auth     string // the Authorization header wanted ("" none)
	queries  atomic.Int64
	cache    map[string][]byte
}

type fakeEP struct {
	labels map[string]string // job, instance, pod, namespace, model_name
	engine string            // metric prefix the endpoint's series carry
	values map[string]float64
	// serves, when set, are the only metric names the endpoint publishes
	// (an older release): a term reading another name finds no series.
	serves map[string]bool
}

// conceptRe finds each tagged term: its concept and, when tagged, the
// metric name it reads.
var conceptRe = regexp.MustCompile(`"llmtop_concept", "([^"]+)", "", ""\)(?:, "llmtop_from", "([^"]+)")?`)

// engineMetricRe is an engine metric's name in a query.
var engineMetricRe = regexp.MustCompile(`\b(?:` + strings.Join(fleetPrefixes(), "|") + `)[a-zA-Z0-9_:]+`)

// fleetPrefixes are the prefixes of the engines the fleet source reads,
// wrapping layers' (ray_vllm:, kserve_vllm:) first.
func fleetPrefixes() []string {
	var out []string
	for _, s := range engines.All() {
		if s.Fleet != nil && s.Prefix() != "" {
			out = append(out, regexp.QuoteMeta(s.Prefix()))
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// fakeTerm is one tagged term of a query: its concept, its llmtop_from tag
// and the engine metrics it reads (histogram suffixes cut).
type fakeTerm struct {
	concept, from string
	names         []string
}

func fakeTerms(q string) []fakeTerm {
	var out []fakeTerm
	prev := 0
	for _, m := range conceptRe.FindAllStringSubmatchIndex(q, -1) {
		t := fakeTerm{concept: q[m[2]:m[3]]}
		if m[4] >= 0 {
			t.from = q[m[4]:m[5]]
		}
		for _, n := range engineMetricRe.FindAllString(q[prev:m[0]], -1) {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				n = strings.TrimSuffix(n, suf)
			}
			t.names = append(t.names, n)
		}
		out = append(out, t)
		prev = m[1]
	}
	return out
}

// serving reports whether the endpoint has series for the term: every
// metric it reads (an older release lacks the new names and the reverse).
func (e fakeEP) serving(t fakeTerm) bool {
	if e.serves == nil || t.concept == "labels" || t.concept == "started" {
		return true
	}
	for _, n := range t.names {
		if !e.serves[n] {
			return false
		}
	}
	return true
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (f *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.queries.Add(1)
	f.mu.Lock()
	delay, status, errType, auth := f.delay, f.status, f.errType, f.auth
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if auth != "" && r.Header.Get("Authorization") != auth {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, "Unauthorized\n")
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": errType, "error": "parse error at char 7: unexpected <by>"})
		return
	}
	if r.URL.Path != "/api/v1/query" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if err := r.ParseForm(); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	q := r.Form.Get("query")
	f.mu.Lock()
	if b, ok := f.cache[q]; ok {
		f.mu.Unlock()
		w.Write(b)
		return
	}
	b := f.answer(q)
	if f.cache != nil {
		f.cache[q] = b
	}
	f.mu.Unlock()
	w.Write(b)
}

func (f *fakeProm) answer(q string) []byte {
	ts := float64(time.Now().Unix())
	res := []promSample{}
	if q == "up" || strings.HasPrefix(q, "up{") {
		for _, e := range f.eps {
			if v, ok := f.up[e.labels["instance"]]; ok {
				res = append(res, promSample{Metric: map[string]string{"__name__": "up", "job": e.labels["job"], "instance": e.labels["instance"]}, Value: [2]any{ts, fmt.Sprint(v)}})
			}
		}
		for inst, v := range f.up { // targets that serve no engine metrics now
			if !f.has(inst) {
				res = append(res, promSample{Metric: map[string]string{"__name__": "up", "job": "vllm", "instance": inst}, Value: [2]any{ts, fmt.Sprint(v)}})
			}
		}
	} else {
		for _, t := range fakeTerms(q) {
			m := [3]string{"", t.concept, t.from}
			for _, e := range f.eps {
				if !asksFamily(q, e.engine) {
					continue
				}
				v, ok := e.values[m[1]]
				if m[1] == "labels" {
					v, ok = 1, true
				}
				if !ok || !e.serving(t) {
					continue
				}
				ls := map[string]string{"llmtop_concept": m[1]}
				if m[2] != "" {
					ls["llmtop_from"] = m[2]
				}
				for k, x := range e.labels {
					switch {
					case m[1] != "labels" && k != "job" && k != "instance" && k != "model_name":
						continue // by (job, instance, model_name)
					case m[1] == "started" && k == "model_name":
						continue
					}
					ls[k] = x
				}
				res = append(res, promSample{Metric: ls, Value: [2]any{ts, formatValue(v)}})
			}
		}
	}
	out := map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": res}}
	if len(f.warnings) > 0 {
		out["warnings"] = f.warnings
	}
	b, _ := json.Marshal(out)
	return b
}

func (f *fakeProm) has(inst string) bool {
	for _, e := range f.eps {
		if e.labels["instance"] == inst {
			return true
		}
	}
	return false
}

// formatValue writes a sample value as Prometheus does ("NaN", "+Inf").
func formatValue(v float64) string {
	switch {
	case v != v:
		return "NaN"
	case v > 1e308:
		return "+Inf"
	}
	return fmt.Sprint(v)
}

// vllmEP is a vLLM replica with every concept set.
func vllmEP(i int, ns, modelName string, kv, waiting, ttftP99 float64) fakeEP {
	return fakeEP{
		engine: "vllm:",
		labels: map[string]string{"job": "vllm", "instance": fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250),
			"pod": fmt.Sprintf("vllm-%d", i), "namespace": ns, "model_name": modelName},
		values: map[string]float64{
			"gauge:running": 12, "gauge:waiting": waiting, "gauge:kv_cache_usage_ratio": kv,
			"rate:generation_tokens": 950.5, "rate:prompt_tokens": 2100, "rate:requests": 4.5, "rate:preemptions": 0,
			"ratio:prefix_cache_hit_ratio": 0.4,
			"lat:ttft:p50":                 ttftP99 / 4, "lat:ttft:p90": ttftP99 / 2, "lat:ttft:p99": ttftP99, "lat:ttft:mean": ttftP99 / 3, "lat:ttft:count": 270,
			"lat:tpot:p50": 0.012, "lat:tpot:p90": 0.02, "lat:tpot:p99": 0.03, "lat:tpot:mean": 0.013, "lat:tpot:count": 270,
			"lat:itl:p50": 0.011, "lat:itl:p90": 0.018, "lat:itl:p99": 0.04, "lat:itl:mean": 0.012, "lat:itl:count": 52000,
			"lat:e2e:mean": 2.4, "lat:e2e:count": 270, "lat:queue:mean": 0.007, "lat:queue:count": 270,
		},
	}
}

// asksFamily reports whether a query reads metrics under the prefix as
// their own (ray_vllm: is not vllm:).
func asksFamily(q, prefix string) bool {
	for i := 0; ; {
		j := strings.Index(q[i:], prefix)
		if j < 0 {
			return false
		}
		at := i + j
		if at == 0 {
			return true
		}
		if c := q[at-1]; !(c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return true
		}
		i = at + len(prefix)
	}
}
