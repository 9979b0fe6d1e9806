package prometheus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"
)

// bigLimits holds every series of the answers compared (the bounds are
// tested on their own).
func bigLimits() *refreshLimits {
	l := &refreshLimits{maxBytes: 1 << 30, maxTargets: 1 << 20, maxSeries: 1 << 20, admitted: map[tkey]bool{}, dropped: map[tkey]bool{}}
	l.bytes.Store(l.maxBytes)
	return l
}

// agree decodes data with the hand-written decoder and with the
// encoding/json one it replaced, and fails where they differ: both fail or
// neither; every series the new one keeps the old one kept, with the same
// labels and value; the series each keeps or drops add up to the same
// count (the new one drops as unreadable what the old one kept with a
// zero: a series without a value, a null in the result list, a value of
// another shape than [time, "float"]); the envelope's fields are the same.
func agree(t *testing.T, data []byte) (apiAnswer, error) {
	t.Helper()
	nl, ol := bigLimits(), bigLimits()
	d := newDecoder()
	na, nerr := d.decode(bytes.NewReader(data), nl, false)
	oa, oerr := decodeAnswerJSON(bytes.NewReader(data), ol, false)
	if (nerr == nil) != (oerr == nil) {
		t.Fatalf("new decoder: %v; encoding/json: %v\n%.300q", nerr, oerr, data)
	}
	// The answer arriving a byte at a time reads the same (the decoder
	// reads through a window that each read extends).
	sa, serr := newDecoder().decode(iotest.OneByteReader(bytes.NewReader(data)), bigLimits(), false)
	if (serr == nil) != (nerr == nil) || nerr != nil && serr.Error() != nerr.Error() {
		t.Fatalf("a byte at a time: %v; at once: %v\n%.300q", serr, nerr, data)
	}
	if nerr != nil {
		return na, nerr
	}
	if len(sa.Rows) != len(na.Rows) || sa.Status != na.Status || strings.Join(sa.Warnings, "\x00") != strings.Join(na.Warnings, "\x00") {
		t.Fatalf("a byte at a time: %d rows %q, at once %d rows %q", len(sa.Rows), sa.Status, len(na.Rows), na.Status)
	}
	for i, r := range sa.Rows {
		if !sameRow(r, na.Rows[i]) {
			t.Fatalf("a byte at a time: row %d %+v, at once %+v", i, *r.labels, *na.Rows[i].labels)
		}
	}
	// The same answer again, through the series the decoder holds
	// (decoder.memo): the same rows.
	first := make([]sampleRow, len(na.Rows))
	for i, r := range na.Rows {
		ls := *r.labels
		first[i] = sampleRow{labels: &ls, v: r.v}
	}
	again, err := d.decode(bytes.NewReader(data), bigLimits(), false)
	if err != nil || len(again.Rows) != len(first) {
		t.Fatalf("read again: %d rows (first %d), %v", len(again.Rows), len(first), err)
	}
	for i, r := range again.Rows {
		if !sameRow(r, first[i]) {
			t.Fatalf("read again: row %d %+v, first %+v", i, *r.labels, *first[i].labels)
		}
	}
	na.Rows = first
	if na.Status != oa.Status || na.ErrorType != oa.ErrorType || na.Error != oa.Error || na.ResultType != oa.ResultType ||
		strings.Join(na.Warnings, "\x00") != strings.Join(oa.Warnings, "\x00") {
		t.Fatalf("envelope %+v, encoding/json %+v", na, oa)
	}
	j := 0
	for _, r := range na.Rows {
		for j < len(oa.Rows) && !sameRow(oa.Rows[j], r) {
			j++
		}
		if j == len(oa.Rows) {
			t.Fatalf("series %+v kept by the new decoder only\n%.300q", r, data)
		}
		j++
	}
	if n, o := len(na.Rows)+nl.bad+nl.long+nl.series, len(oa.Rows)+ol.bad+ol.long+ol.series; n != o {
		t.Fatalf("%d series read (%d kept), encoding/json %d (%d kept)", n, len(na.Rows), o, len(oa.Rows))
	}
	return na, nil
}

func sameRow(a, b sampleRow) bool {
	return a.labels.equal(b.labels) && (a.v == b.v || math.IsNaN(a.v) && math.IsNaN(b.v))
}

// TestDecoderAgreesWithEncodingJSON: the answers of the fake Prometheus
// at the benchmark's scale, the real Prometheus's answers captured in
// testdata, and hand-made edge cases decode the same with both decoders.
func TestDecoderAgreesWithEncodingJSON(t *testing.T) {
	var docs [][]byte
	f := &fakeProm{up: map[string]float64{}}
	for i := range 40 {
		e := vllmEP(i, "prod", []string{"llama-3-8b", "qwen2.5-7b"}[i%2], 0.3, 1, 0.2)
		e.labels["pod"] = fmt.Sprintf("vllm-\u00e9\"%d\\", i) // escapes and UTF-8 in a label
		f.eps = append(f.eps, e)
		f.up[e.labels["instance"]] = float64(i % 2)
	}
	for _, b := range families {
		b := builder{f: b, window: "5m"}
		docs = append(docs, f.answer(b.stateQuery()), f.answer(b.latencyQuery()))
	}
	docs = append(docs, f.answer("up"))
	captures, _ := filepath.Glob("testdata/answers/*.json")
	if len(captures) == 0 {
		t.Fatal("no captured answers in testdata/answers")
	}
	for _, c := range captures {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	rows := 0
	for _, d := range docs {
		a, err := agree(t, d)
		if err != nil {
			t.Fatalf("%v\n%.300s", err, d)
		}
		rows += len(a.Rows)
	}
	if rows < 1000 {
		t.Fatalf("only %d series compared", rows)
	}
	for _, d := range []string{
		`{"status":"success","data":{"resultType":"vector","result":[]}}`,
		" \n{ \"status\" : \"success\" , \"data\" : { \"result\" : [ { \"value\" : [ 1 , \"2\" ] , \"metric\" : { \"job\" : \"a\\u00e9\\ud83d\\ude00\\ud800x\" } } ] , \"resultType\" : \"vector\" } }\n",
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j","instance":"i","extra":{"deep":[1,2,{"x":null}]}},"value":[1.5e3,"NaN"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j","instance":"i"},"value":[1,"1e400"]},{"metric":{"job":"j","instance":"k"},"value":[1,"-Inf"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":5,"instance":"i"},"value":[1,"1"]},{"metric":{"job":"j","instance":"k"},"value":[1,"2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j","instance":"i"},"histogram":[1,{"count":"3","sum":"4","buckets":[[0,"0.1","0.2","3"]]}]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[null,{"metric":{"job":"j","instance":"k"},"value":[1,"2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j","instance":"k"},"value":[1,"2","3"]}]}}`,
		`{"status":"success","data":{"resultType":"scalar","result":[1700000000,"3"]}}`,
		`{"status":"success","data":{"resultType":"string","result":"x"}}`,
		`{"status":"error","errorType":"bad_data","error":"parse error at char 7: unexpected \u003cby\u003e","data":null}`,
		`{"status":"success","warnings":["a","b"],"infos":["PromQL info: metric might not be a counter"],"data":{"resultType":"vector","result":[]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j","instance":"i"},"value":[1,"\u0031"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j","instance":"i"},"value":null}]}}`,
	} {
		if _, err := agree(t, []byte(d)); err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
	}
}

// TestDecoderRefusesWhatIsNotJSON: broken answers fail with an error that
// says where, never a panic, and none of them is taken as a series.
func TestDecoderRefusesWhatIsNotJSON(t *testing.T) {
	for _, d := range []string{
		``, `{`, `[]`, `null`, `{"status":"success",}`, `{"status":"success" "data":{}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j"},"value":[1,"2"]}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"j\x01"},"value":[1,"2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"\q"},"value":[1,"2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"\u12"},"value":[1,"2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[01,"2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1.,"2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"2"],}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[tru,"2"]}]}}`,
		`{"status":"success","data":{"resultType":"vector","result":{}}}`,
		`{"status":1}`, `{"data":5}`, `{"warnings":[1]}`,
		`{"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
		`{"x":` + strings.Repeat("[", 1<<20),
	} {
		a, err := decodeAnswer(strings.NewReader(d), bigLimits(), false)
		if err == nil {
			t.Errorf("%.80q decoded: %+v", d, a)
			continue
		}
		if _, oerr := decodeAnswerJSON(strings.NewReader(d), bigLimits(), false); oerr == nil {
			t.Errorf("%.80q: encoding/json reads it", d)
		}
	}
}

// TestDecoderInternsLabels: a decoder reading the same answer again
// allocates no string for its labels (a fleet whose label sets did not
// change costs no garbage for them), and reuses its rows.
func TestDecoderInternsLabels(t *testing.T) {
	f := &fakeProm{up: map[string]float64{}}
	for i := range 200 {
		f.eps = append(f.eps, vllmEP(i, "prod", "llama-3-8b", 0.3, 1, 0.2))
	}
	doc := f.answer(builder{f: families[0], window: "5m"}.stateQuery())
	d := newDecoder()
	read := func() apiAnswer {
		a, err := d.decode(bytes.NewReader(doc), bigLimits(), false)
		if err != nil || len(a.Rows) < 1000 {
			t.Fatalf("%d rows, %v", len(a.Rows), err)
		}
		return a
	}
	first := read().Rows[0].labels.Instance
	second := read().Rows[0].labels.Instance
	if first == "" || first != second || unsafe.StringData(first) != unsafe.StringData(second) {
		t.Errorf("the second read's label %q is a new string (the first %q)", second, first)
	}
	// What a read allocates beyond the limits it is given: the answer's
	// rows and strings are the decoder's.
	r := bytes.NewReader(doc)
	lim := bigLimits()
	allocs := testing.AllocsPerRun(5, func() {
		r.Reset(doc)
		for k := range lim.admitted {
			delete(lim.admitted, k)
		}
		if _, err := d.decode(r, lim, false); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 20 {
		t.Errorf("a read of an unchanged answer of %d series made %.0f allocations", len(read().Rows), allocs)
	}
}

// TestDecoderMemoReadsWhatChanged: a decoder that holds the series of an
// earlier answer (decoder.memo) reads the next answer as a fresh decoder
// and encoding/json do: a series whose labels changed is read anew, one
// that is gone is gone, one that is new is there, a value is always the
// answer's, and a label set seen once is held once.
func TestDecoderMemoReadsWhatChanged(t *testing.T) {
	row := func(inst, concept, v string) string {
		return `{"metric":{"instance":"` + inst + `","job":"vllm","llmtop_concept":"` + concept + `"},"value":[1700000000,"` + v + `"]}`
	}
	doc := func(rows ...string) []byte {
		return []byte(`{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(rows, ",") + `]}}`)
	}
	d := newDecoder()
	read := func(b []byte) []sampleRow {
		t.Helper()
		a, err := d.decode(bytes.NewReader(b), bigLimits(), false)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeAnswerJSON(bytes.NewReader(b), bigLimits(), false)
		if err != nil || len(want.Rows) != len(a.Rows) {
			t.Fatalf("%d rows, encoding/json %d (%v)", len(a.Rows), len(want.Rows), err)
		}
		for i := range a.Rows {
			if !sameRow(a.Rows[i], want.Rows[i]) {
				t.Fatalf("row %d: %+v = %v, encoding/json %+v = %v", i, *a.Rows[i].labels, a.Rows[i].v, *want.Rows[i].labels, want.Rows[i].v)
			}
		}
		return a.Rows
	}
	one := read(doc(row("a:1", "gauge:running", "1"), row("b:1", "gauge:running", "2"), row("c:1", "gauge:running", "3")))
	a1 := one[0].labels
	// b's concept changed, c is gone, d is new, in another order; a's value changed
	two := read(doc(row("d:1", "gauge:running", "4"), row("b:1", "gauge:waiting", "5"), row("a:1", "gauge:running", "6")))
	if two[2].labels != a1 {
		t.Errorf("a:1's unchanged labels were read anew (%p, first %p)", two[2].labels, a1)
	}
	if two[2].v != 6 || two[1].labels.Concept != "gauge:waiting" || two[0].labels.Instance != "d:1" {
		t.Errorf("second answer read as %+v %+v %+v", *two[0].labels, *two[1].labels, *two[2].labels)
	}
	// The same bytes with an escape, and a second "metric" object read over
	// the first (as encoding/json reads it)
	esc := `{"metric":{"instance":"e\u0031:1","job":"vllm"},"metric":{"job":"other"},"value":[1,"7"]}`
	held := `{"metric":{"instance":"a:1","job":"vllm","llmtop_concept":"gauge:running"},"metric":{"job":"other"},"value":[1,"9"]}`
	for range 2 {
		r := read(doc(esc, row("a:1", "gauge:running", "8"), held))
		if r[0].labels.Instance != "e1:1" || r[0].labels.Job != "other" || r[2].labels.Job != "other" || r[1].labels.Job != "vllm" {
			t.Errorf("labels %+v %+v %+v", *r[0].labels, *r[1].labels, *r[2].labels)
		}
	}
	// A second "metric" over held labels does not write them.
	pod := `{"metric":{"instance":"p:1","job":"vllm","pod":"p0"},"value":[1,"1"]}`
	podOver := `{"metric":{"instance":"p:1","job":"vllm","pod":"p0"},"metric":{"pod":"p1"},"value":[1,"2"]}`
	read(doc(pod))
	if r := read(doc(podOver, pod)); r[0].labels.get("pod") != "p1" || r[1].labels.get("pod") != "p0" {
		t.Errorf("pods %q %q, want p1 p0", r[0].labels.get("pod"), r[1].labels.get("pod"))
	}
	// The series held are bounded by those read: a fleet whose label
	// values churn does not grow them.
	for i := range 50 {
		var rows []string
		for j := range 20 {
			rows = append(rows, row(fmt.Sprintf("x%d-%d:1", i, j), "gauge:running", "1"))
		}
		read(doc(rows...))
	}
	if n := len(d.memo); n > 20+20/2+256 {
		t.Errorf("%d series held after answers of 20", n)
	}
}

// TestDecoderHoldsABoundedNumberOfSeries: past maxHeld series an answer's
// series are read anew each time, and read right.
func TestDecoderHoldsABoundedNumberOfSeries(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
	n := maxHeld + 1000
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metric":{"instance":"i%d:1","job":"vllm"},"value":[1,"%d"]}`, i, i)
	}
	b.WriteString(`]}}`)
	doc := []byte(b.String())
	d := newDecoder()
	for range 2 {
		a, err := d.decode(bytes.NewReader(doc), bigLimits(), false)
		if err != nil || len(a.Rows) != n {
			t.Fatalf("%d rows, %v", len(a.Rows), err)
		}
		if last := a.Rows[n-1]; last.labels.Instance != fmt.Sprintf("i%d:1", n-1) || last.v != float64(n-1) {
			t.Fatalf("last row %+v = %v", *last.labels, last.v)
		}
	}
	if len(d.memo) > maxHeld {
		t.Errorf("%d series held, at most %d", len(d.memo), maxHeld)
	}
}

// FuzzDecoderAgreesWithEncodingJSON: any bytes decode with the new
// decoder exactly when they decode with encoding/json, and to the same
// series (agree).
func FuzzDecoderAgreesWithEncodingJSON(f *testing.F) {
	f.Add([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"vllm","instance":"a:8000","llmtop_concept":"gauge:running"},"value":[1700000000.5,"12"]}]}}`))
	f.Add([]byte(`{"status":"error","errorType":"bad_data","error":"x","data":null,"warnings":["w"]}`))
	f.Add([]byte(`{"data":{"result":[{"metric":{"job":"\u00e9\ud83d\ude00"},"value":[1,"NaN"]},null,{"histogram":[1,{}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, data)
	})
}

// TestRealAnswersDecode: the captured answers of a real Prometheus hold
// the series the source reads (every family's state and latency terms,
// up{}), so the comparison above covers what a real server writes.
func TestRealAnswersDecode(t *testing.T) {
	captures, _ := filepath.Glob("testdata/answers/*.json")
	concepts := map[string]bool{}
	for _, c := range captures {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		a, err := decodeAnswer(bytes.NewReader(b), bigLimits(), false)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if a.Status != "success" || a.ResultType != "vector" {
			if a.Status == "error" && (a.ErrorType == "" || a.Error == "") {
				t.Errorf("%s: error answer read as %+v", c, a)
			}
			continue
		}
		var generic struct {
			Data struct {
				Result []json.RawMessage
			}
		}
		if err := json.Unmarshal(b, &generic); err != nil {
			t.Fatal(err)
		}
		if len(a.Rows) != len(generic.Data.Result) {
			t.Errorf("%s: %d series of %d", c, len(a.Rows), len(generic.Data.Result))
		}
		for _, r := range a.Rows {
			concepts[strings.SplitN(r.labels.Concept, ":", 2)[0]] = true
		}
	}
	for _, k := range []string{"gauge", "rate", "lat", "labels"} {
		if !concepts[k] {
			t.Errorf("no %s series in the captures: %v", k, concepts)
		}
	}
}

// BenchmarkDecode is the decoder alone on the answers of one refresh of
// a 500-replica fleet (every query's, from the same decoders refresh after
// refresh, as the source reads them).
func BenchmarkDecode(b *testing.B) {
	fl := newBenchFleet(b, 500, 1)
	var docs [][]byte
	for _, d := range fl.caches[0] {
		docs = append(docs, d)
	}
	decs := make([]*decoder, len(docs))
	for i := range decs {
		decs[i] = newDecoder()
	}
	size := 0
	for _, d := range docs {
		size += len(d)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for i, d := range docs {
			if _, err := decs[i].decode(bytes.NewReader(d), bigLimits(), false); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// A series held reads its value as plainValue would (heldValue keeps the
// last timestamp's and each series' last value's text): answer after
// answer of a fleet whose values mostly repeat, with timestamps that move
// or stay, written as integers or with a fraction, values of every kind
// ("NaN", "+Inf", "1e400", texts too long to keep, the same number written
// two ways), series that come and go and a row written another way, one
// decoder reads what encoding/json reads of each.
func TestHeldValuesReadAsPlainValues(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	vals := []string{"0.3", "0.30", "3e-1", "12", "0", "-0", "NaN", "+Inf", "-Inf", "1e400", "0.1000000000000000055511151231257827", "123456789012345678901234", "7"}
	const n = 60
	cur := make([]string, n)
	for i := range cur {
		cur[i] = vals[r.IntN(len(vals))]
	}
	d := newDecoder()
	ts := "1700000000"
	held := 0
	for round := range 80 {
		switch r.IntN(4) {
		case 0:
			ts = fmt.Sprint(1700000000 + round*5)
		case 1:
			ts = fmt.Sprintf("%d.%03d", 1700000000+round*5, r.IntN(1000))
		}
		var b strings.Builder
		b.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
		first := true
		for i := range n {
			if r.IntN(20) == 0 {
				cur[i] = vals[r.IntN(len(vals))]
			}
			if r.IntN(30) == 0 {
				continue // gone this answer
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			row := fmt.Sprintf(`{"metric":{"job":"vllm","instance":"10.0.0.%d:8000"},"value":[%s,"%s"]}`, i, ts, cur[i])
			if r.IntN(25) == 0 {
				row = fmt.Sprintf(`{ "value" : [ %s , "%s" ], "metric":{"job":"vllm","instance":"10.0.0.%d:8000"} }`, ts, cur[i], i)
			}
			b.WriteString(row)
		}
		b.WriteString(`]}}`)
		doc := []byte(b.String())
		got, err := d.decode(bytes.NewReader(doc), bigLimits(), false)
		want, werr := decodeAnswerJSON(bytes.NewReader(doc), bigLimits(), false)
		if err != nil || werr != nil {
			t.Fatalf("round %d: %v / %v", round, err, werr)
		}
		if len(got.Rows) != len(want.Rows) {
			t.Fatalf("round %d: %d rows, encoding/json %d", round, len(got.Rows), len(want.Rows))
		}
		for i := range got.Rows {
			if !sameRow(got.Rows[i], want.Rows[i]) {
				t.Fatalf("round %d row %d: %v, encoding/json %v", round, i, got.Rows[i].v, want.Rows[i].v)
			}
		}
		for _, m := range d.memo {
			if m.vlen > 0 {
				held++
			}
		}
	}
	if held < 1000 {
		t.Fatalf("%d values held: the test proves little", held)
	}
}
