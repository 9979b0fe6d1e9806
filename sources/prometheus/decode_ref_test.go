package prometheus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The decoder before scan.go, on encoding/json: the reference the
// hand-written one is checked against (TestDecoderAgreesWithEncodingJSON,
// FuzzDecoderAgreesWithEncodingJSON).

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

// decodeAnswer reads the API's JSON envelope
// ({"status","data":{"resultType","result":[...]},"warnings","errorType","error"})
// token by token, decoding each series on its own.
func decodeAnswerJSON(r io.Reader, lim *refreshLimits, up bool) (apiAnswer, error) {
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
			err = refData(dec, &a, lim, up)
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

func refData(dec *json.Decoder, a *apiAnswer, lim *refreshLimits, up bool) error {
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
			err = refResult(dec, a, lim, up)
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
	Metric refLabels `json:"metric"`
	Value  promValue `json:"value"`
}

func refResult(dec *json.Decoder, a *apiAnswer, lim *refreshLimits, up bool) error {
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
		ls := r.Metric.rowLabels()
		if ls.tooLong() {
			long++
			continue
		}
		k := keyOf(ls)
		if k != (tkey{}) {
			if ok, _ := lim.admit(k, up); !ok {
				continue
			}
		}
		a.Rows = append(a.Rows, sampleRow{labels: ls, v: float64(r.Value)})
	}
	lim.count(over, bad, long)
	return expectDelim(dec, ']')
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

// refLabels are rowLabels as encoding/json reads them.
type refLabels struct {
	Job        string `json:"job"`
	Instance   string `json:"instance"`
	Pod        string `json:"pod"`
	Namespace  string `json:"namespace"`
	KPod       string `json:"kubernetes_pod_name"`
	KNs        string `json:"kubernetes_namespace"`
	Model      string `json:"model_name"`
	EngineType string `json:"engine_type"`
	ISvcRole   string `json:"llm_isvc_role"`
	WorkerType string `json:"worker_type"`
	DisaggMode string `json:"disaggregation_mode"`
	Server     string `json:"server"`
	Concept    string `json:"llmtop_concept"`
	From       string `json:"llmtop_from"`
}

func (r refLabels) rowLabels() *rowLabels {
	return &rowLabels{Job: r.Job, Instance: r.Instance, Model: r.Model, Concept: r.Concept, From: r.From,
		rare: &rareLabels{Pod: r.Pod, Namespace: r.Namespace, KPod: r.KPod, KNs: r.KNs, EngineType: r.EngineType,
			ISvcRole: r.ISvcRole, WorkerType: r.WorkerType, DisaggMode: r.DisaggMode, Server: r.Server}}
}
