package prometheus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// The role labels (engines.PDLabels) and the label a router's series
	// carry in place of model_name (engines.ProdStackRouter.Shadow).
	EngineType string `json:"engine_type"`
	ISvcRole   string `json:"llm_isvc_role"`
	WorkerType string `json:"worker_type"`
	Server     string `json:"server"`
	Concept    string `json:"llmtop_concept"`
	From       string `json:"llmtop_from"`
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
	case "engine_type":
		return l.EngineType
	case "llm_isvc_role":
		return l.ISvcRole
	case "worker_type":
		return l.WorkerType
	case "server":
		return l.Server
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
		return &valueError{fmt.Sprintf("sample value %.40q: want [time, \"value\"]", b)}
	}
	// the value is the JSON string after the last comma: `"12"]`
	q := bytes.TrimSpace(b[i+1:])
	q = bytes.TrimSpace(bytes.TrimSuffix(q, []byte("]")))
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return &valueError{fmt.Sprintf("sample value %.40q: want [time, \"value\"]", b)}
	}
	s := string(q[1 : len(q)-1])
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return &valueError{fmt.Sprintf("sample value %.40q: %v", s, err)}
	}
	if err != nil {
		return &valueError{fmt.Sprintf("sample value %.40q: out of range", s)}
	}
	*v = promValue(f)
	return nil
}

// valueError is a sample value that is not a float64.
type valueError struct{ msg string }

func (e *valueError) Error() string { return e.msg }

func isRangeErr(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && ne.Err == strconv.ErrRange
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
func (s *Source) query(ctx context.Context, q string, ts time.Time, lim *refreshLimits, up bool) ([]sampleRow, []string, error) {
	form := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(ts.UnixMilli())/1e3, 'f', -1, 64)},
		"timeout": {s.cfg.Timeout.String()}}
	u := s.client.URL("/api/v1/query", nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	a, jerr := decodeAnswer(&capped{r: resp.Body, lim: lim}, lim, up)
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

// errOverBudget marks the refresh's byte bound being reached.
var errOverBudget = errors.New("over budget")

// budgetError keeps the bound's own message and marks it.
type budgetError struct{ msg string }

func (e budgetError) Error() string   { return e.msg }
func (e budgetError) Is(t error) bool { return t == errOverBudget }

// decodeAnswer reads the API's JSON envelope
// ({"status","data":{"resultType","result":[...]},"warnings","errorType","error"})
// token by token, decoding each series on its own.
func decodeAnswer(r io.Reader, lim *refreshLimits, up bool) (apiAnswer, error) {
	var a apiAnswer
	dec := json.NewDecoder(r)
	fail := func(err error) (apiAnswer, error) {
		var ce *cappedError
		if errors.As(err, &ce) {
			return a, budgetError{ce.msg}
		}
		return a, err
	}
	if err := expectDelim(dec, '{'); err != nil {
		return fail(err)
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return fail(err)
		}
		switch key {
		case "status":
			err = dec.Decode(&a.Status)
		case "errorType":
			err = dec.Decode(&a.ErrorType)
		case "error":
			err = dec.Decode(&a.Error)
		case "warnings", "infos":
			var ws []string
			if err = dec.Decode(&ws); err == nil {
				for _, w := range ws {
					if len(a.Warnings) < maxWarnings {
						a.Warnings = append(a.Warnings, truncate(w, 512))
					}
				}
			}
		case "data":
			err = decodeData(dec, &a, lim, up)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return fail(err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail(err)
	}
	return a, nil
}

func decodeData(dec *json.Decoder, a *apiAnswer, lim *refreshLimits, up bool) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t == nil {
		return nil // "data": null (an error answer)
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("data is %v, want an object", t)
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return err
		}
		switch key {
		case "resultType":
			err = dec.Decode(&a.ResultType)
		case "result":
			err = decodeResult(dec, a, lim, up)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

// rawRow is one series as the API writes it.
type rawRow struct {
	Metric rowLabels `json:"metric"`
	Value  promValue `json:"value"`
}

func decodeResult(dec *json.Decoder, a *apiAnswer, lim *refreshLimits, up bool) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t == nil {
		return nil
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		// a scalar or string result is [time, "value"]: read and refuse
		// it by its resultType
		if d, ok := t.(json.Delim); ok && d == '{' {
			return fmt.Errorf("result is an object, want a list")
		}
		return nil
	}
	var over, bad, long int
	for dec.More() {
		var r rawRow
		if err := dec.Decode(&r); err != nil {
			var te *json.UnmarshalTypeError
			var ve *valueError
			if !errors.As(err, &te) && !errors.As(err, &ve) {
				return err
			}
			bad++ // the series was read whole; its value or a label was not what the API writes
			continue
		}
		if len(a.Rows) >= lim.maxSeries {
			over++
			continue
		}
		if r.Metric.tooLong() {
			long++
			continue
		}
		k := keyOf(r.Metric)
		if k != (tkey{}) && !lim.admit(k, up) {
			continue
		}
		a.Rows = append(a.Rows, sampleRow{labels: r.Metric, v: float64(r.Value)})
	}
	lim.count(over, bad, long)
	return expectDelim(dec, ']')
}

func (l rowLabels) tooLong() bool {
	for _, v := range [...]string{l.Job, l.Instance, l.Pod, l.Namespace, l.KPod, l.KNs, l.Model, l.Concept, l.From} {
		if len(v) > maxLabelLen {
			return true
		}
	}
	return false
}

func objectKey(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", err
	}
	k, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("want an object key, got %v", t)
	}
	return k, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, t)
	}
	return nil
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
