package prometheus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The queries go through the official client's HTTP layer
// (client_golang/api: its URL building, transport and body reading), and
// the answers are decoded here in one pass into only the labels llmtop
// reads. The v1 API decodes every answer three times (the envelope, the
// result, then each sample's label map): at 500 targets that was 190 ms of
// CPU a refresh (3.8 % of a core at 5 s); this is the same JSON
// (https://prometheus.io/docs/prometheus/latest/querying/api/#expression-query-result-formats).

// apiError is an error answer of the HTTP API (status "error", or an HTTP
// error without the envelope).
type apiError struct {
	Type string // bad_data, timeout, canceled, execution, internal, unavailable, not_found, http
	Msg  string
	Code int
}

func (e *apiError) Error() string { return e.Type + ": " + e.Msg }

// rowLabels are the labels llmtop reads from an answer's series.
type rowLabels struct {
	Job       string `json:"job"`
	Instance  string `json:"instance"`
	Pod       string `json:"pod"`
	Namespace string `json:"namespace"`
	KPod      string `json:"kubernetes_pod_name"`
	KNs       string `json:"kubernetes_namespace"`
	Model     string `json:"model_name"`
	Concept   string `json:"llmtop_concept"`
	From      string `json:"llmtop_from"`
}

// get reads a label by its Prometheus name.
func (l rowLabels) get(name string) string {
	switch name {
	case "job":
		return l.Job
	case "instance":
		return l.Instance
	case "pod":
		return l.Pod
	case "namespace":
		return l.Namespace
	case "kubernetes_pod_name":
		return l.KPod
	case "kubernetes_namespace":
		return l.KNs
	case "model_name":
		return l.Model
	case conceptLabel:
		return l.Concept
	case fromLabel:
		return l.From
	}
	return ""
}

// promValue is an instant sample's [time, "value"] pair; only the value
// is kept ("NaN", "+Inf" and "-Inf" included).
type promValue float64

func (v *promValue) UnmarshalJSON(b []byte) error {
	i := bytes.LastIndexByte(b, ',')
	if i < 0 {
		return fmt.Errorf("sample value %.40q: want [time, \"value\"]", b)
	}
	s := strings.Trim(strings.TrimSpace(string(b[i+1:])), `]" `)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("sample value %.40q: %v", s, err)
	}
	*v = promValue(f)
	return nil
}

type apiAnswer struct {
	Status    string   `json:"status"`
	ErrorType string   `json:"errorType"`
	Error     string   `json:"error"`
	Warnings  []string `json:"warnings"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric rowLabels `json:"metric"`
			Value  promValue `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// query runs one instant query at ts.
func (s *Source) query(ctx context.Context, q string, ts time.Time) ([]sampleRow, []string, error) {
	form := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(ts.UnixMilli())/1e3, 'f', -1, 64)},
		"timeout": {s.cfg.Timeout.String()}}
	u := s.client.URL("/api/v1/query", nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body, err := s.client.Do(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	var a apiAnswer
	jerr := json.Unmarshal(body, &a)
	if resp.StatusCode/100 != 2 {
		if jerr == nil && a.Status == "error" {
			return nil, a.Warnings, &apiError{Type: a.ErrorType, Msg: a.Error, Code: resp.StatusCode}
		}
		return nil, nil, &apiError{Type: "http", Msg: resp.Status, Code: resp.StatusCode}
	}
	switch {
	case jerr != nil:
		return nil, nil, &apiError{Type: "bad_response", Msg: "the answer is not the Prometheus API's JSON: " + jerr.Error(), Code: resp.StatusCode}
	case a.Status != "success":
		return nil, a.Warnings, &apiError{Type: nonEmpty(a.ErrorType, "bad_response"), Msg: nonEmpty(a.Error, "status "+a.Status), Code: resp.StatusCode}
	case a.Data.ResultType != "vector" && len(a.Data.Result) > 0:
		return nil, a.Warnings, &apiError{Type: "bad_response", Msg: "answered a " + a.Data.ResultType + ", want a vector"}
	}
	rows := make([]sampleRow, len(a.Data.Result))
	for i, r := range a.Data.Result {
		rows[i] = sampleRow{labels: r.Metric, v: float64(r.Value)}
	}
	return rows, a.Warnings, nil
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
