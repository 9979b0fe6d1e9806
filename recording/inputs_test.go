package recording

import (
	"bytes"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Issue 30: every input the core takes (model.Inputs, the closed set) is
// written and read back as itself, so a replay is fed what the live core
// was. A new input without its encoding fails here. Before, fleet
// membership (model.Origin) and probe results (model.Behaviour) were
// dropped without a word, and acknowledgements, silences and window
// changes never reached the recording.
func TestEveryCoreInputIsRecorded(t *testing.T) {
	at := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	samples := map[reflect.Type]model.Input{
		reflect.TypeOf(model.Origin{}):       model.Origin{Endpoint: "prom:a", Name: "prod/vllm-0", Source: model.SourcePrometheus, Gone: true, GoneWhy: "no longer among Prometheus's targets"},
		reflect.TypeOf(model.Behaviour{}):    model.Behaviour{Endpoint: "http://e:8000", Time: at, Raw: []model.Exchange{{}}},
		reflect.TypeOf(model.Ack{}):          model.Ack{Time: at, Endpoint: "http://e:8000", Finding: "kv_full"},
		reflect.TypeOf(model.Silence{}):      model.Silence{Time: at, Rule: "kv_full", Until: at.Add(time.Hour)},
		reflect.TypeOf(model.WindowChange{}): model.WindowChange{Time: at, Window: 5 * time.Minute},
		reflect.TypeOf(model.Batch{}): model.Batch{model.Origin{Endpoint: "prom:a", Name: "prod/vllm-0", Source: model.SourcePrometheus},
			model.Scrape{Endpoint: "prom:a", Time: at, Err: "down", ErrKind: model.ErrUnreachable}},
		reflect.TypeOf(model.BenchDone{}): model.BenchDone{Bench: model.Bench{URL: "http://e:8000", Completed: 3, TTFTp50: model.Some(120)}, Run: model.RunBench{Completed: 3}},
	}
	for _, in := range model.Inputs() {
		typ := reflect.TypeOf(in)
		if s, ok := samples[typ]; ok {
			in = s
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Face: "monitor", Started: at})
		if err != nil {
			t.Fatal(err)
		}
		ok, err := w.Write(at, in)
		if err != nil || !ok {
			t.Errorf("%s is not recorded (written %v, %v)", typ, ok, err)
			continue
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&buf, "t")
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil && err != io.EOF {
			t.Fatalf("%s: %v", typ, err)
		}
		if reflect.TypeOf(rec.Msg) != typ {
			t.Errorf("%s reads back as %T", typ, rec.Msg)
			continue
		}
		if _, ok := samples[typ]; ok {
			want := in
			if b, isB := want.(model.Behaviour); isB {
				b.Raw = nil // the raw exchanges hold prompts: not recorded
				want = b
			}
			if !reflect.DeepEqual(rec.Msg, want) {
				t.Errorf("%s reads back as %+v, want %+v", typ, rec.Msg, want)
			}
		}
	}
}
