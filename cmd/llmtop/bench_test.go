package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/bench/report"
	"github.com/llmtop/llmtop/tui"
)

func benchCmd() (*cobra.Command, *bytes.Buffer) {
	var out bytes.Buffer
	c := &cobra.Command{}
	c.SetOut(&out)
	c.SetErr(&bytes.Buffer{})
	return c, &out
}

// `llmtop bench` against the simulator: vllm's JSON names, the server's own
// view attached, the key never written anywhere.
func TestBenchAgainstSim(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := benchSim(t, ctx, func(h http.Handler) http.Handler { return h })
	save := filepath.Join(t.TempDir(), "run.json")
	old := benchFlags
	defer func() { benchFlags = old }()
	benchFlags.api, benchFlags.rate, benchFlags.burstiness = "chat", "inf", 1
	benchFlags.concurrency, benchFlags.numRequests, benchFlags.inputLen, benchFlags.outputLen = 4, 8, 16, 8
	benchFlags.warmup, benchFlags.seed, benchFlags.timeout = 1, 1, time.Minute
	benchFlags.asJSON, benchFlags.save, engineFlags.apiKey = true, save, "sk-secret-4242"
	defer func() { engineFlags.apiKey = "" }()
	c, out := benchCmd()
	got := benchJSONWith(t, ctx, c, out, srv.URL)
	for _, k := range []string{"completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput",
		"output_throughput", "total_token_throughput", "request_goodput", "mean_ttft_ms", "median_tpot_ms", "p99_itl_ms",
		"std_e2el_ms", "max_concurrent_requests", "duration"} {
		if _, ok := got[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if got["completed"] != 8.0 || got["total_output_tokens"] != 64.0 {
		t.Errorf("completed %v, output tokens %v (the sim honours ignore_eos)", got["completed"], got["total_output_tokens"])
	}
	if srvView, ok := got["server"].(map[string]any); !ok || srvView["ttft_ms"] == nil {
		t.Errorf("the server's view is missing: %v", got["server"])
	}
	if got["simulated"] != true || !strings.Contains(fmt.Sprint(got["notes"]), "SIMULATED") {
		t.Errorf("a run against the simulator is not marked: simulated %v notes %v", got["simulated"], got["notes"])
	}
	if fr, ok := got["finish_reasons"].(map[string]any); !ok || fr["length"] != 8.0 {
		t.Errorf("finish_reasons %v, want length 8 (ignore_eos, max_tokens 8)", got["finish_reasons"])
	}
	saved, err := os.ReadFile(save)
	if err != nil || !bytes.Contains(saved, []byte(`"mean_ttft_ms"`)) {
		t.Fatalf("saved file: %v", err)
	}
	if bytes.Contains(saved, []byte("sk-secret")) || strings.Contains(out.String(), "sk-secret") {
		t.Error("the API key leaked into the result")
	}
}

func TestBenchUnreachableExitsWithCounts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	old := benchFlags
	defer func() { benchFlags = old }()
	benchFlags.api, benchFlags.rate, benchFlags.burstiness, benchFlags.model = "chat", "inf", 1, "m"
	benchFlags.concurrency, benchFlags.duration, benchFlags.inputLen, benchFlags.outputLen = 2, 10*time.Second, 8, 8
	benchFlags.timeout, benchFlags.asJSON, benchFlags.noServer, benchFlags.save = time.Second, false, true, ""
	c, out := benchCmd()
	err = runBench(context.Background(), c, url)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("err %v: want exit 1 when nothing succeeded", err)
	}
	if !strings.Contains(out.String(), "connect:") || !strings.Contains(out.String(), "refused every connection") {
		t.Errorf("report:\n%s", out.String())
	}
}

// Results saved by the TUI come back as its history, newest first.
func TestBenchSavedRoundTrip(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	r := &report.Result{Info: report.Info{ModelID: "m", StartTime: time.Now()}}
	r.Completed = 3
	sw := &report.Sweep{Mode: "concurrency", Knee: -1, Steps: []report.Step{{Load: 1, Result: *r}}}
	br := benchRunner{newMonitorRuntime()}
	p1, err := br.Save(tui.BenchOutcome{Spec: tui.BenchSpec{Preset: "quick"}, Result: r})
	if err != nil || !strings.HasSuffix(p1, "-quick.json") {
		t.Fatalf("%q %v", p1, err)
	}
	time.Sleep(1100 * time.Millisecond) // names carry the second
	if _, err := br.Save(tui.BenchOutcome{Spec: tui.BenchSpec{Preset: "sweep"}, Sweep: sw}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(filepath.Dir(p1), "99999999-999999-junk.json"), []byte("{not json"), 0o644)
	got := br.Saved(10)
	if len(got) != 2 || got[0].Sweep == nil || got[1].Result == nil || got[1].Result.Completed != 3 || got[1].Spec.Preset != "quick" {
		t.Fatalf("saved: %+v", got)
	}
}

// The demo's (simulated) results go to a folder of its own under $TMPDIR
// and its history lists only them: kept with the user's, they were listed
// under "Other targets" when the user benchmarked a real engine.
func TestDemoBenchResultsStayOutOfTheUsersHistory(t *testing.T) {
	state, tmp := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("TMPDIR", tmp)
	r := &report.Result{Info: report.Info{ModelID: "m", StartTime: time.Now()}}
	r.Completed = 3
	user := benchRunner{newMonitorRuntime()}
	if _, err := user.Save(tui.BenchOutcome{Spec: tui.BenchSpec{Preset: "quick"}, Result: r}); err != nil {
		t.Fatal(err)
	}
	demo := benchRunner{newMonitorRuntime()}
	demo.rt.benches.begin(true)
	if got := demo.Saved(10); len(got) != 0 {
		t.Errorf("the demo lists the user's runs: %+v", got)
	}
	r2 := *r
	r2.Completed = 5
	p, err := demo.Save(tui.BenchOutcome{Spec: tui.BenchSpec{Preset: "quick"}, Result: &r2})
	if err != nil || !strings.HasPrefix(p, tmp+string(filepath.Separator)+"llmtop-demo-") {
		t.Fatalf("demo saved to %q (%v), want under %s", p, err, tmp)
	}
	if names, _ := filepath.Glob(filepath.Join(state, "llmtop", "bench", "*.json")); len(names) != 1 {
		t.Errorf("the user's history holds %v, want only the user's run", names)
	}
	if got := demo.Saved(10); len(got) != 1 || got[0].Result.Completed != 5 {
		t.Errorf("the demo's history: %+v", got)
	}
}

// endlessSSE is a chat endpoint whose streams never end; it counts the
// requests in flight.
func endlessSSE(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var inFlight atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		}
		inFlight.Add(1)
		defer inFlight.Add(-1)
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok\"},\"finish_reason\":null}]}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(s.Close)
	return s, &inFlight
}

// SIGINT or SIGTERM in the middle of `llmtop bench` against streams that
// never end: it reports and saves what it measured, the requests in flight
// counted as cancelled, with the run's real length.
func TestBenchSignalSavesWhatItMeasured(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			srv, inFlight := endlessSSE(t)
			save := filepath.Join(t.TempDir(), "run.json")
			cmd, out := startLlmtop(t, "bench", srv.URL, "--duration", "1m", "--warmup", "0", "--concurrency", "3",
				"--input-len", "8", "--output-len", "8", "--no-server-view", "--save", save)
			deadline := time.Now().Add(20 * time.Second)
			for inFlight.Load() < 3 {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
					t.Fatalf("%d requests in flight after 20 s, want the 3 streams (no probe first)\n%s", inFlight.Load(), out)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code, _ := exitCode(t, cmd, 20*time.Second); code != 1 {
				t.Errorf("exit status %d, want 1 (no request succeeded)\n%s", code, out)
			}
			b, err := os.ReadFile(save)
			if err != nil {
				t.Fatalf("nothing saved: %v\n%s", err, out)
			}
			var got report.Result
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Cancelled != 3 || got.Failed != 0 || got.Duration <= 0 {
				t.Errorf("saved cancelled %d failed %d duration %.2fs, want the 3 in flight as cancelled and a real duration",
					got.Cancelled, got.Failed, got.Duration)
			}
			if !strings.Contains(out.String(), "Cancelled requests:") {
				t.Errorf("the report does not count the cancelled requests:\n%s", out)
			}
		})
	}
}

// Against a real llama-server without --metrics the result had no server
// lines and no word why: it says the metrics route answered 501.
func TestBenchSaysWhyTheServerViewIsMissing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := benchSim(t, ctx, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/metrics" {
				http.Error(w, "This server does not support metrics endpoint.", http.StatusNotImplemented)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	old := benchFlags
	defer func() { benchFlags = old }()
	benchFlags.api, benchFlags.rate, benchFlags.burstiness = "chat", "inf", 1
	benchFlags.concurrency, benchFlags.numRequests, benchFlags.inputLen, benchFlags.outputLen = 2, 4, 8, 4
	benchFlags.warmup, benchFlags.seed, benchFlags.timeout = 0, 1, time.Minute
	benchFlags.asJSON, benchFlags.save = true, ""
	got := benchJSON(t, ctx, srv.URL)
	if got["server"] != nil || !strings.Contains(fmt.Sprint(got["notes"]), "no server view") || !strings.Contains(fmt.Sprint(got["notes"]), "501") {
		t.Fatalf("server %v notes %v", got["server"], got["notes"])
	}
}

// benchSim serves the simulator (its handler passed through wrap) until the
// test ends, once its health route answers 200.
func benchSim(t *testing.T, ctx context.Context, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	s, err := sim.New(sim.Config{Seed: 1, StartupTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(ctx)
	srv := httptest.NewServer(wrap(s.Handler()))
	t.Cleanup(srv.Close)
	for i := 0; i < 100; i++ {
		if r, err := http.Get(srv.URL + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return srv
}

// benchJSON runs `llmtop bench --json` (benchFlags as set) against url and
// decodes its result.
func benchJSON(t *testing.T, ctx context.Context, url string) map[string]any {
	t.Helper()
	c, out := benchCmd()
	return benchJSONWith(t, ctx, c, out, url)
}

func benchJSONWith(t *testing.T, ctx context.Context, c *cobra.Command, out *bytes.Buffer, url string) map[string]any {
	t.Helper()
	if err := runBench(ctx, c, url); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	return got
}
