package recording

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

var t0 = time.Date(2026, 11, 24, 14, 2, 11, 123456789, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// every kind of message the core takes, with the awkward values: +Inf
// buckets, a NaN gauge, a huge counter, an event pointer, unknown (absent)
// GPU fields.
func allMessages() []Record {
	s := model.NewSample("http://a:8000", "llama", at(1), model.FromScrape)
	s.Gauges[model.Gauge("running")] = 3
	s.Gauges[model.Gauge("weird")] = math.Inf(-1)
	s.Counters[model.Counter("generation_tokens")] = 123456789012.25
	s.Latencies[model.Latency("ttft")] = model.Histogram{Sum: 1.5, Count: 7,
		Buckets: []model.Bucket{{UpperBound: 0.1, Count: 3}, {UpperBound: math.Inf(1), Count: 7}}}
	s.Latencies[model.Latency("tgi_ttft")] = model.Histogram{Approx: "sum of parts", Parts: []model.Histogram{{Sum: 1, Count: 2}}}
	s.FinishReasons["stop"] = 9
	s.Info["block_size"] = "16"
	s.Notes = []string{"summed over 2 engines"}
	s.From = map[string]string{"itl": "vllm:time_per_output_token_seconds"} // what the adapter read (issue 14 item 8)
	s.Started = at(-100)
	logSample := model.NewSample("http://a:8000", "", at(2), model.FromLog)
	logSample.Gauges[model.Gauge("running")] = 1
	logSample.Observations = []model.Observation{{Time: at(2), Values: map[model.Latency]float64{model.Prefill: 0.4465, model.TPOT: 0.00303},
		Notes: map[model.Latency]string{model.Prefill: "without the wait for a slot"}}}
	ev := model.Event{Time: at(3), Endpoint: "http://a:8000", Source: "log", Kind: "cuda_oom", Severity: model.SevCrit,
		Category: "memory", Title: "CUDA out of memory", Line: "torch.OutOfMemoryError", Fields: map[string]string{"phase": "crash"}}
	return []Record{
		{at(1), model.Scrape{Endpoint: "http://a:8000", Time: at(1), Took: 12 * time.Millisecond,
			Identity: model.Identity{Engine: model.VLLM, Version: "0.11.0", Health: model.HealthUp,
				Models: []model.ModelInfo{{ID: "llama", MaxContext: 8192}}}, Samples: []model.Sample{s}}},
		{at(2), model.Scrape{Endpoint: "http://a:8000", Time: at(2), Err: "connection refused", ErrKind: model.ErrRefused, Hint: "is it running?",
			Identity: model.Identity{Health: model.HealthDown}}},
		{at(2), logSample},
		{at(3), model.LogLine{Time: at(3), Endpoint: "http://a:8000", Text: "torch.OutOfMemoryError", Event: &ev}},
		{at(3), model.LogLines{{Time: at(3), Text: "a"}, {Time: at(3), Text: "b \"quoted\" <html>"}}},
		{at(3), ev},
		{at(4), model.GPUSnapshot{Time: at(4), Driver: "550", GPUs: []model.GPU{{Index: 0, Name: "H100", Util: model.Some(97),
			MemUsed: model.Some(1234), Throttle: []string{"power cap"}, Processes: []model.GPUProcess{{PID: 7, Name: "python", UsedMem: model.Some(1000)}}}}}},
		{at(5), model.PortOwner{Endpoint: "http://a:8000", Time: at(5), Port: 8000, PID: 0,
			Engines: []model.Process{{PID: 4711, Cmdline: "vllm serve", Age: 38 * time.Second}}, Note: "container"}},
		{at(5), model.HostReading{Endpoint: "http://a:8000", Time: at(5), IntervalS: 2, CPUs: 8, MemAvailable: model.Some(1e9),
			Procs: []model.ProcUsage{{PID: 4711, Name: "vllm", Front: true, CPU: model.Some(1.1), RSS: model.Some(2e9), Threads: 40,
				Busiest: model.ThreadUsage{TID: 4712, Name: "APIServer", CPU: model.Some(0.7), Want: model.Some(0.99)}}},
			Disks: []model.DiskFree{{Path: "/data", What: "log", Free: model.Some(1e10)}}, NotChecked: []string{"x: not checked, because y"}}},
		{at(6), Bench{Bench: diagnosis.Bench{URL: "http://a:8000", Start: at(0), End: at(6), Completed: 10, TTFTp99: model.Some(250)},
			Run: model.RunBench{Time: at(0), Completed: 10, TTFTp99ms: model.Some(250)}}},
		{at(6), Scenario{Name: "kv-pressure", Elapsed: 40 * time.Second, Length: 75 * time.Second}},
		{at(7), Note{Text: "3 messages not recorded"}},
		{at(7), Tick{}},
	}
}

func writeAll(t *testing.T, recs []Record, secrets ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Llmtop: "test", Face: "monitor", Started: t0, Endpoints: []string{"http://a:8000"},
		Interval: Duration(time.Second), Window: Duration(time.Minute)}, secrets...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		ok, err := w.Write(r.Time, r.Msg)
		if err != nil || !ok {
			t.Fatalf("write %T: %v %v", r.Msg, ok, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(t *testing.T, b []byte) (Header, []Record, []string) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), "test.llmrec")
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return r.Header(), out, r.Notes()
}

func TestRoundTripEveryMessageType(t *testing.T) {
	in := allMessages()
	h, out, notes := readAll(t, writeAll(t, in))
	if h.Version != Version || h.Face != "monitor" || !h.Started.Equal(t0) || time.Duration(h.Window) != time.Minute || h.Endpoints[0] != "http://a:8000" {
		t.Fatalf("header: %+v", h)
	}
	if len(notes) != 0 {
		t.Fatalf("notes on a clean file: %q", notes)
	}
	if len(out) != len(in) {
		t.Fatalf("%d records back, want %d", len(out), len(in))
	}
	for i := range in {
		if !out[i].Time.Equal(in[i].Time) {
			t.Errorf("record %d time %v, want %v", i, out[i].Time, in[i].Time)
		}
		if !reflect.DeepEqual(out[i].Msg, in[i].Msg) {
			t.Errorf("record %d (%T) differs:\n got %#v\nwant %#v", i, in[i].Msg, out[i].Msg, in[i].Msg)
		}
	}
}

func TestNaNSurvives(t *testing.T) {
	s := model.NewSample("e", "m", at(0), model.FromScrape)
	s.Gauges["g"] = math.NaN()
	_, out, _ := readAll(t, writeAll(t, []Record{{at(0), s}}))
	if g := out[0].Msg.(model.Sample).Gauges["g"]; !math.IsNaN(g) {
		t.Fatalf("NaN came back as %v", g)
	}
}

// A crash mid-write leaves a file cut anywhere: every record before the
// last flush reads back, the partial one is skipped with a note.
func TestTornFileReadsUpToTheTear(t *testing.T) {
	in := allMessages()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Face: "monitor", Started: t0})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in[:5] {
		w.Write(r.Time, r.Msg)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	flushed := buf.Len()
	for _, r := range in[5:] {
		w.Write(r.Time, r.Msg)
	}
	w.Flush()
	full := buf.Bytes()
	// cut at every byte after the first flush: never an error, never a
	// record invented, at least the flushed ones back.
	cuts := 0
	for cut := flushed; cut < len(full); cut += 7 {
		_, out, notes := readAll(t, full[:cut])
		if len(out) < 5 || len(out) > len(in) {
			t.Fatalf("cut at %d: %d records", cut, len(out))
		}
		for i := range out {
			if !reflect.DeepEqual(out[i].Msg, in[i].Msg) {
				t.Fatalf("cut at %d: record %d differs", cut, i)
			}
		}
		if len(notes) == 0 || !strings.Contains(notes[0], "ends mid-record") {
			t.Fatalf("cut at %d: notes %q", cut, notes)
		}
		cuts++
	}
	if cuts < 3 {
		t.Fatalf("only %d cuts tried", cuts)
	}
}

func gz(s string) []byte {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte(s))
	z.Close()
	return b.Bytes()
}

func TestNewerVersionSaysWhichVersion(t *testing.T) {
	_, err := NewReader(bytes.NewReader(gz(`{"llmtop_recording":7,"llmtop":"v9","face":"monitor","future":{"x":1}}`+"\n")), "new.llmrec")
	if err == nil || !strings.Contains(err.Error(), "version 7") || !strings.Contains(err.Error(), "reads version 1") {
		t.Fatalf("err = %v", err)
	}
	// a header whose fields changed type in the newer version
	_, err = NewReader(bytes.NewReader(gz(`{"llmtop_recording":2,"started":12}`+"\n")), "new.llmrec")
	if err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestCutInsideTheHeader(t *testing.T) {
	partial := gz(`{"llmtop_recording":1,"llmtop":"dev","face":"mon`)
	for name, b := range map[string][]byte{
		"the stream ends mid-line": partial,
		"the stream itself is cut": partial[:len(partial)-6],
	} {
		_, err := NewReader(bytes.NewReader(b), "cut.llmrec")
		if err == nil || !strings.Contains(err.Error(), "cut.llmrec ends inside its header line") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestNotARecording(t *testing.T) {
	for name, b := range map[string][]byte{
		"plain text": []byte("hello\n"),
		"other json": gz(`{"time":"2026-01-01T00:00:00Z","endpoints":[]}` + "\n"),
		"empty gzip": gz(""),
	} {
		_, err := NewReader(bytes.NewReader(b), "x.llmrec")
		if err == nil || !strings.Contains(err.Error(), "x.llmrec") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestUnknownKindsAndBadLinesAreSkippedWithANote(t *testing.T) {
	b := gz(`{"llmtop_recording":1,"face":"monitor"}` + "\n" +
		`{"t":1795615331000000001,"k":"hologram","m":{}}` + "\n" +
		`{"t":1795615331000000002,"k":"event","m":{"severity":"apocalyptic"}}` + "\n" +
		`{"t":1795615331000000003,"k":"tick"}` + "\n")
	_, out, notes := readAll(t, b)
	if len(out) != 1 || out[0].Msg != (Tick{}) {
		t.Fatalf("records %+v", out)
	}
	all := strings.Join(notes, "\n")
	if !strings.Contains(all, `1 "hologram"`) || !strings.Contains(all, "1 records could not be decoded") {
		t.Fatalf("notes %q", notes)
	}
}

// Secrets never reach the file, even when a log line prints them.
func TestSecretsAreRedacted(t *testing.T) {
	key := `sk-live-"4242"<x>`
	recs := []Record{
		{at(1), model.LogLine{Time: at(1), Text: "non-default args: {'api_key': '" + key + "'}"}},
		{at(1), model.Scrape{Endpoint: "http://a:8000", Time: at(1), Err: "GET http://user:" + key + "@a/metrics: 401", ErrKind: model.ErrAuth}},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Face: "monitor", Endpoints: []string{"http://user:" + key + "@a"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		w.Write(r.Time, r.Msg)
	}
	w.Close()
	b := buf.Bytes()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if bytes.Contains(plain, []byte("4242")) {
		t.Fatalf("the key reached the file:\n%s", plain)
	}
	if !bytes.Contains(plain, []byte("REDACTED")) {
		t.Fatalf("nothing redacted:\n%s", plain)
	}
}

func TestCreateNeverOverwritesAndIsPrivate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.llmrec")
	w, err := Create(p, Header{Face: "diagnose"})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(at(0), Tick{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	if _, err := Create(p, Header{}); err == nil || !strings.Contains(err.Error(), "never overwrites") {
		t.Fatalf("second create: %v", err)
	}
	h, recs, notes, err := ReadFile(p)
	if err != nil || h.Face != "diagnose" || len(recs) != 1 || len(notes) != 0 {
		t.Fatalf("%+v %v %q %v", h, recs, notes, err)
	}
}

// The recorder never blocks its callers and writes in order, ticks
// included; what it had to drop is said in the file.
func TestRecorderOrderTicksAndDrops(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{Face: "monitor"})
	clock := at(0)
	r := NewRecorder(w, RecorderOptions{Now: func() time.Time { return clock }, Every: time.Hour, Ticks: true, Queue: 4})
	for i := 0; i < 4; i++ {
		r.RecordAt(at(i), model.Event{Time: at(i), Title: "e"})
	}
	// the queue may be full (the writer goroutine may not have run): these
	// are written or counted as dropped, never block.
	for i := 0; i < 100; i++ {
		r.RecordAt(at(10), model.Event{Time: at(10), Title: "burst"})
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, out, _ := readAll(t, buf.Bytes())
	var events, noted int
	var last time.Time
	for _, rec := range out {
		switch m := rec.Msg.(type) {
		case model.Event:
			events++
			if rec.Time.Before(last) {
				t.Fatalf("out of order at %v", rec.Time)
			}
			last = rec.Time
		case Note:
			var n int
			if _, err := fmt.Sscanf(m.Text, "%d", &n); err != nil {
				t.Fatalf("note %q", m.Text)
			}
			noted += n
		}
	}
	if events+noted != 104 || events < 4 {
		t.Fatalf("%d events written + %d noted as dropped, want 104", events, noted)
	}
}

// Rotation: past MaxBytes the file is closed and the recording goes on in
// the next, each file whole (its own header) and nothing lost between.
func TestRecorderRotates(t *testing.T) {
	var mu sync.Mutex
	var files []*bytes.Buffer
	next := func() (*Writer, error) {
		mu.Lock()
		defer mu.Unlock()
		b := &bytes.Buffer{}
		files = append(files, b)
		return NewWriter(b, Header{Face: "monitor"})
	}
	nfiles := func() int { mu.Lock(); defer mu.Unlock(); return len(files) }
	w, _ := next()
	clock := at(0)
	r := NewRecorder(w, RecorderOptions{Now: func() time.Time { return clock }, Every: time.Millisecond, Next: next, MaxBytes: 300})
	sent := 0
	deadline := time.Now().Add(60 * time.Second)
	for nfiles() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("%d files after 60 s", nfiles())
		}
		r.RecordAt(at(sent), model.Event{Time: at(sent), Title: fmt.Sprintf("event %d with some words to fill the file", sent)})
		sent++
		time.Sleep(100 * time.Microsecond)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r.Records() != int64(sent) {
		t.Fatalf("%d records counted, %d sent", r.Records(), sent)
	}
	var got []int
	for _, f := range files {
		_, out, notes := readAll(t, f.Bytes())
		if len(notes) != 0 || len(out) == 0 {
			t.Fatalf("%d records, notes %q: every file whole, none empty", len(out), notes)
		}
		for _, rec := range out {
			var n int
			fmt.Sscanf(rec.Msg.(model.Event).Title, "event %d", &n)
			got = append(got, n)
		}
	}
	if len(files) < 4 || len(got) != sent {
		t.Fatalf("%d files, %d events", len(files), len(got))
	}
	for i, n := range got {
		if n != i {
			t.Fatalf("event %d is #%d: order lost across files", i, n)
		}
	}
}

// A crafted recording (escape sequences and control characters in a log
// line, a model id, an event, a map key, the header's endpoint) reads back
// with none of them: a replay draws nothing a live monitor would refuse.
func TestCraftedRecordingIsCleaned(t *testing.T) {
	evil := "x\x1b]0;pwned\x07\x1b[2J\ry\x08z\x1b[31m"
	s := model.NewSample("http://a:8000"+evil, "llama"+evil, at(1), model.FromScrape)
	s.Info["block"+evil] = "16" + evil
	s.Notes = []string{evil}
	ev := model.Event{Time: at(3), Endpoint: evil, Source: "log", Kind: "cuda_oom", Severity: model.SevCrit,
		Category: "memory", Title: evil, Line: evil, Fields: map[string]string{evil: evil}}
	in := []Record{
		{at(1), model.Scrape{Endpoint: evil, Time: at(1), Err: evil, Identity: model.Identity{Engine: model.VLLM, Version: evil,
			Models: []model.ModelInfo{{ID: evil}}}, Samples: []model.Sample{s}}},
		{at(2), model.LogLine{Time: at(2), Endpoint: evil, Text: evil, Event: &ev}},
		{at(3), model.LogLines{{Time: at(3), Text: evil}}},
		{at(3), ev},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Face: "monitor", Started: t0, Endpoints: []string{evil}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in {
		if _, err := w.Write(r.Time, r.Msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h, out, _ := readAll(t, buf.Bytes())
	if len(out) != len(in) {
		t.Fatalf("%d records back, want %d", len(out), len(in))
	}
	var bad []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			if strings.ContainsAny(v.String(), "\x1b\x07\x08\r\n\t") {
				bad = append(bad, fmt.Sprintf("%q", v.String()))
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				walk(it.Key())
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(h))
	for _, r := range out {
		walk(reflect.ValueOf(r.Msg))
	}
	if len(bad) > 0 {
		t.Fatalf("control characters read back from a recording: %v", bad)
	}
	if got, want := out[1].Msg.(model.LogLine).Text, model.Clean(evil); got != want || !strings.Contains(got, "x") || !strings.Contains(got, "z") {
		t.Fatalf("log line read back as %q, want %q (the text around the sequences kept)", got, want)
	}
}
