package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// withLog is the default endpoint (running 8, 500 tok/s on /metrics) with a
// log picture of running and gen tok/s, age old, and a log source attached.
func withLog(running, gen float64, old time.Duration, evs ...model.Event) Input {
	e := ep(func(e *Endpoint) {
		e.State.Running, e.State.GenTPS = model.Some(30), model.Some(2000)
		e.Log = model.State{Key: model.Key{Endpoint: url}, Source: model.FromLog, Time: t0.Add(-old), Samples: 6,
			Running: model.Some(running), GenTPS: model.Some(gen)}
	})
	return withEvents(e, evs...)
}

func TestLogMismatch(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "log agrees within churn", in: withLog(24, 1600, 5*time.Second), none: "log_mismatch"},
		{name: "log is another engine's", in: withLog(2, 60, 5*time.Second), want: "log_mismatch",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "running 30 on /metrics vs 2 in the log (log stats line 04:59:55)") ||
					!hasEvidence(f, "generation 2000 tok/s on /metrics vs 60 in the log") || !hasAction(f, "--docker NAME") {
					t.Errorf("%+v", *f)
				}
			}},
		{name: "only running differs: a batch drained between the two readings", in: withLog(2, 1900, 5*time.Second), none: "log_mismatch"},
		{name: "small absolute gaps are not a mismatch", in: func() Input {
			in := withLog(1, 5, 5*time.Second)
			in.Endpoints[0].State.Running, in.Endpoints[0].State.GenTPS = model.Some(6), model.Some(20)
			return in
		}(), none: "log_mismatch"},
		{name: "a log without a running count (llama.cpp timing lines) is not judged on throughput alone", in: func() Input {
			in := withLog(0, 60, 5*time.Second)
			in.Endpoints[0].Log.Running = model.None
			return in
		}(), none: "log_mismatch"},
		{name: "a stale log line is not compared", in: withLog(2, 60, time.Minute), none: "log_mismatch"},
		{name: "the log names another engine", in: withLog(24, 1600, 5*time.Second, logEvent("sglang_decode", nil)), want: "log_mismatch",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "the log is SGLang's, the endpoint is vLLM") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
		{name: "the engine name is checked without any stats line", in: func() Input {
			in := withLog(0, 0, 0, logEvent("sglang_decode", nil))
			in.Endpoints[0].Log = model.State{}
			return in
		}(), want: "log_mismatch"},
		{name: "a log without an endpoint is not judged against one of several endpoints", in: func() Input {
			in := withLog(24, 1600, 5*time.Second, logEvent("sglang_decode", nil))
			other := ep(nil)
			other.URL, other.State.Key.Endpoint = "http://other:8000", "http://other:8000"
			in.Endpoints = append(in.Endpoints, other)
			return in
		}(), none: "log_mismatch"},
		{name: "Ollama logs its llama.cpp runner", in: func() Input {
			in := withLog(24, 1600, 5*time.Second, logEvent("llamacpp_kv_alloc", nil))
			in.Endpoints[0].Identity.Engine = model.Ollama
			return in
		}(), none: "log_mismatch"},
		{name: "a picture taken from the log is not cross-checked with itself", in: func() Input {
			in := withLog(2, 60, 5*time.Second)
			in.Endpoints[0].State.Source = model.FromLog
			return in
		}(), none: "log_mismatch"},
		{name: "a picture taken from the log still has its engine checked", in: func() Input {
			in := withLog(2, 60, 5*time.Second, logEvent("sglang_decode", nil))
			in.Endpoints[0].State.Source = model.FromLog
			return in
		}(), want: "log_mismatch"},
	})
	// Ollama: its metrics carry no numbers, the picture is the log's own;
	// the stats comparison was listed as checked with nothing compared.
	in := withLog(2, 60, 5*time.Second)
	in.Endpoints[0].State.Source = model.FromLog
	rep := Evaluate(in, DefaultConfig())
	for _, c := range rep.Checked {
		if strings.Contains(c, "stats lines agree") {
			t.Errorf("checked %q with nothing to compare", c)
		}
	}
	if !strings.Contains(strings.Join(rep.Missing, "\n"), "whether the log's stats lines agree with the metrics") {
		t.Errorf("not said as not checked: %q", rep.Missing)
	}
}

// Through the Store: the log's stats samples (nameless key) land in
// Endpoint.Log beside the scraped State.
func TestEndpointFromStoreKeepsTheLogPicture(t *testing.T) {
	s := model.NewStore(model.StoreConfig{})
	k := model.Key{Endpoint: url, Model: "m"}
	for i := 0; i < 3; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		sc := model.NewSample(url, "m", at, model.FromScrape)
		sc.Gauges[model.Running] = 30
		s.Add(sc)
		lg := model.NewSample(url, "", at, model.FromLog)
		lg.Gauges[model.Running] = 2
		s.Add(lg)
	}
	e := EndpointFromStore(s, k, model.Identity{Engine: model.VLLM}, model.Scrape{}, t0, time.Minute)
	if e.State.Source != model.FromScrape || e.State.Running != model.Some(30) || e.Log.Running != model.Some(2) {
		t.Fatalf("state %v %v, log %v", e.State.Source, e.State.Running, e.Log.Running)
	}
}

// A log names the engine under the server (engines.Spec.Runs), never
// another one.
func TestSameEngineFamily(t *testing.T) {
	for _, c := range []struct {
		log, served model.Engine
		want        bool
	}{
		{model.VLLM, model.VLLM, true},
		{model.TRTLLM, model.Triton, true},
		{model.LlamaCpp, model.Ollama, true},
		{model.Ollama, model.LlamaCpp, false},
		{model.Triton, model.TRTLLM, false},
		{model.VLLM, model.SGLang, false},
		{model.Unknown, model.VLLM, false},
		{model.Unknown, model.Unknown, true},
	} {
		if got := sameEngineFamily(c.log, c.served); got != c.want {
			t.Errorf("sameEngineFamily(%q, %q) = %v, want %v", c.log, c.served, got, c.want)
		}
	}
}
