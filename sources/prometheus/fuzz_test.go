package prometheus

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"
)

func fuzzLimits() *refreshLimits {
	l := &refreshLimits{maxBytes: 1 << 20, maxTargets: 50, maxSeries: 200, admitted: map[tkey]bool{}, dropped: map[tkey]bool{}}
	l.bytes.Store(l.maxBytes)
	return l
}

// FuzzPromAnswer: any bytes as an answer of Prometheus's query API decode
// or fail with an error, never a panic, and what decodes keeps the bounds:
// at most maxSeries rows, of at most maxTargets targets, no label value
// over maxLabelLen.
func FuzzPromAnswer(f *testing.F) {
	for _, s := range []string{
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"vllm","instance":"a:8000","llmtop_concept":"gauge:num_requests_running"},"value":[1700000000.5,"12"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j","instance":"i"},"value":[1,"1e400"]},{"metric":{"job":"j","instance":"k"},"value":[1,"NaN"]}]}}`,
		`{"status":"error","errorType":"bad_data","error":"parse error"}`,
		`{"status":"success","warnings":["w"],"data":{"resultType":"matrix","result":[]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":1},"value":[1,"2"]}]}}`,
		`[]`, `{"data":null}`, `{"data":{"result":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := fuzzLimits()
		a, err := decodeAnswer(bytes.NewReader(data), lim, false)
		if err != nil {
			return
		}
		if len(a.Rows) > lim.maxSeries || len(lim.admitted) > lim.maxTargets || len(a.Warnings) > maxWarnings {
			t.Fatalf("%d rows, %d targets, %d warnings", len(a.Rows), len(lim.admitted), len(a.Warnings))
		}
		for _, r := range a.Rows {
			if r.labels.tooLong() {
				t.Fatalf("a label over %d bytes kept", maxLabelLen)
			}
		}
	})
}

// FuzzPromValues checks the values, not only the absence of a panic: a
// well-formed answer whose series carry any value text and labels decodes
// to exactly the float64 strconv reads from that text, with the labels as
// sent; a value text that is no float64 ("1e400", "x") drops its series
// alone and counts it, and the other series are kept.
func FuzzPromValues(f *testing.F) {
	f.Add("12", "0.5", "vllm", "10.0.0.1:8000", "m")
	f.Add("NaN", "+Inf", "j", "i", "")
	f.Add("1e400", "-3", "j", "i", "\x1b]0;x\x07")
	f.Add("0x1p-2", "1_000", "", "", "m")
	f.Fuzz(func(t *testing.T, v1, v2, job, inst, mdl string) {
		job, inst, mdl = asJSON(job), asJSON(inst), asJSON(mdl) // what the answer carries (invalid UTF-8 as U+FFFD)
		type row struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		rows := []row{
			{Metric: map[string]string{"job": job, "instance": inst, "model_name": mdl}, Value: [2]any{1700000000.25, v1}},
			{Metric: map[string]string{"job": "other", "instance": "h:1"}, Value: [2]any{1700000000.25, v2}},
		}
		doc, err := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": rows}})
		if err != nil {
			return
		}
		lim := fuzzLimits()
		a, err := decodeAnswer(bytes.NewReader(doc), lim, false)
		if err != nil {
			t.Fatalf("a well-formed answer failed: %v\n%s", err, doc)
		}
		want := 0
		got := map[string]sampleRow{}
		for _, r := range a.Rows {
			got[r.labels.Job+"\x00"+r.labels.Instance] = r
		}
		for i, vs := range []string{v1, v2} {
			m := rows[i].Metric
			long := len(m["job"]) > maxLabelLen || len(m["instance"]) > maxLabelLen || len(m["model_name"]) > maxLabelLen
			f, perr := strconv.ParseFloat(vs, 64)
			r, kept := got[m["job"]+"\x00"+m["instance"]]
			switch {
			case perr != nil || long:
				if kept && i == 1 {
					t.Fatalf("value %q kept as %v", vs, r.v)
				}
			default:
				want++
				if !kept {
					t.Fatalf("value %q (%v) dropped", vs, f)
				}
				if r.v != f && !(math.IsNaN(r.v) && math.IsNaN(f)) {
					t.Fatalf("value %q read as %v, want %v", vs, r.v, f)
				}
				if i == 0 && (r.labels.Job != job || r.labels.Instance != inst || r.labels.Model != mdl) {
					t.Fatalf("labels %+v, want %q %q %q", r.labels, job, inst, mdl)
				}
			}
		}
		if len(a.Rows)+lim.bad+lim.long != 2 && !(job == "other" && inst == "h:1") {
			t.Fatalf("%d rows + %d bad + %d long, want 2 (want %d kept)", len(a.Rows), lim.bad, lim.long, want)
		}
	})
}

// asJSON is s as a JSON string carries it.
func asJSON(s string) string {
	b, _ := json.Marshal(s)
	var out string
	json.Unmarshal(b, &out)
	return out
}
