package prometheus

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The queries go through the official client's HTTP layer
// (client_golang/api: its URL building, transport and body reading), and
// the answers are decoded in one pass into only the labels llmtop reads
// (scan.go). The v1 API decodes every answer three times (the envelope,
// the result, then each sample's label map): at 500 targets that was 190 ms
// of CPU a refresh (3.8 % of a core at 5 s); encoding/json token by token
// into these structs, 42 % of the source's cost; the hand-written decoder
// reads the same JSON
// (https://prometheus.io/docs/prometheus/latest/querying/api/#expression-query-result-formats)
// and is checked against encoding/json (decode_ref_test.go).

// apiError is an error answer of the HTTP API (status "error", or an HTTP
// error without the envelope).
type apiError struct {
	Type string // bad_data, timeout, canceled, execution, internal, unavailable, not_found, http
	Msg  string
	Code int
}

func (e *apiError) Error() string { return e.Type + ": " + e.Msg }

// rowLabels are the labels llmtop reads from an answer's series: those of
// every series here, the rest (the labels term's, a router's) in rare,
// nil when it has none (a decoder holds one per series: most are of one
// target's number).
type rowLabels struct {
	Job      string
	Instance string
	Model    string // model_name
	Concept  string // llmtop_concept
	From     string // llmtop_from
	rare     *rareLabels
}

type rareLabels struct {
	Pod, Namespace, KPod, KNs string // pod, namespace, kubernetes_pod_name, kubernetes_namespace
	// The role labels (engines.PDLabels) and the label a router's series
	// carry in place of model_name (engines.ProdStackRouter.Shadow).
	EngineType, ISvcRole, WorkerType, DisaggMode, Server string
}

// get reads a label by its Prometheus name.
func (l *rowLabels) get(name string) string {
	switch name {
	case "job":
		return l.Job
	case "instance":
		return l.Instance
	case "model_name":
		return l.Model
	case conceptLabel:
		return l.Concept
	case fromLabel:
		return l.From
	}
	if l.rare == nil {
		return ""
	}
	switch name {
	case "pod":
		return l.rare.Pod
	case "namespace":
		return l.rare.Namespace
	case "kubernetes_pod_name":
		return l.rare.KPod
	case "kubernetes_namespace":
		return l.rare.KNs
	case "engine_type":
		return l.rare.EngineType
	case "llm_isvc_role":
		return l.rare.ISvcRole
	case "worker_type":
		return l.rare.WorkerType
	case "disaggregation_mode":
		return l.rare.DisaggMode
	case "server":
		return l.rare.Server
	}
	return ""
}

// equal reports whether two label sets are the same.
func (l *rowLabels) equal(o *rowLabels) bool {
	var none rareLabels
	a, b := l.rare, o.rare
	if a == nil {
		a = &none
	}
	if b == nil {
		b = &none
	}
	return l.Job == o.Job && l.Instance == o.Instance && l.Model == o.Model && l.Concept == o.Concept && l.From == o.From && *a == *b
}

type apiAnswer struct {
	Status, ErrorType, Error string
	Warnings                 []string
	ResultType               string
	Rows                     []sampleRow
}

// query runs one instant query at ts. The answer is read as a stream, one
// series at a time, under the refresh's limits: a series of a target over
// the cap, past maxSeries, with an unreadable value ("1e400") or an
// oversized label is dropped and counted, never the whole answer.
func (s *Source) query(ctx context.Context, d *decoder, queryField string, ts time.Time, lim *refreshLimits, up bool) ([]sampleRow, []string, error) {
	form := queryForm(queryField, ts, s.cfg.Timeout)
	u := s.client.URL("/api/v1/query", nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	a, jerr := d.decode(&capped{r: resp.Body, lim: lim}, lim, up)
	if ctx.Err() != nil && jerr != nil {
		return nil, nil, ctx.Err()
	}
	if resp.StatusCode/100 != 2 {
		if jerr == nil && a.Status == "error" {
			return nil, a.Warnings, &apiError{Type: a.ErrorType, Msg: a.Error, Code: resp.StatusCode}
		}
		return nil, nil, &apiError{Type: "http", Msg: resp.Status, Code: resp.StatusCode}
	}
	switch {
	case jerr != nil:
		if errors.Is(jerr, errOverBudget) {
			return nil, nil, jerr
		}
		return nil, nil, &apiError{Type: "bad_response", Msg: "the answer is not the Prometheus API's JSON: " + jerr.Error(), Code: resp.StatusCode}
	case a.Status != "success":
		return nil, a.Warnings, &apiError{Type: nonEmpty(a.ErrorType, "bad_response"), Msg: nonEmpty(a.Error, "status "+a.Status), Code: resp.StatusCode}
	case a.ResultType != "vector" && len(a.Rows) > 0:
		return nil, a.Warnings, &apiError{Type: "bad_response", Msg: "answered a " + a.ResultType + ", want a vector"}
	}
	return a.Rows, a.Warnings, nil
}

// queryForm is the form of an instant query (url.Values' encoding, its
// fields in order), the query's field escaped once (queryAll).
func queryForm(queryField string, ts time.Time, timeout time.Duration) string {
	return queryField + "&time=" + url.QueryEscape(strconv.FormatFloat(float64(ts.UnixMilli())/1e3, 'f', -1, 64)) +
		"&timeout=" + url.QueryEscape(timeout.String())
}

// errOverBudget marks the refresh's byte bound being reached.
var errOverBudget = errors.New("over budget")

// budgetError keeps the bound's own message and marks it.
type budgetError struct{ msg string }

func (e budgetError) Error() string   { return e.msg }
func (e budgetError) Is(t error) bool { return t == errOverBudget }

func (l *rowLabels) tooLong() bool {
	for _, v := range [...]string{l.Job, l.Instance, l.get("pod"), l.get("namespace"), l.get("kubernetes_pod_name"), l.get("kubernetes_namespace"), l.Model, l.Concept, l.From} {
		if len(v) > maxLabelLen {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
