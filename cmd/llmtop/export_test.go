package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/exporter"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// `llmtop export` as wired: the engine source polls a fake vLLM (its
// fixture) and an endpoint that refuses, the core runs on its own
// goroutine, /metrics serves both; promtool accepts the output; ending the
// context ends it.
func TestExportServesTheCore(t *testing.T) {
	srv := httptest.NewServer(enginetest.New(model.VLLM))
	defer srv.Close()
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var engineOnly []sourcePlugin
	for _, p := range sourcePlugins {
		if p.Name == "engine" {
			engineOnly = append(engineOnly, p)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serveExport(ctx, ln, exporter.New("test"), exportSetup{
			URLs: []string{srv.URL, deadURL}, Interval: 250 * time.Millisecond, Sources: engineOnly,
		})
	}()
	url := "http://" + ln.Addr().String() + "/metrics"
	var body string
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if strings.Contains(body, "llmtop_requests_running{") && strings.Contains(body, `llmtop_endpoint_up{endpoint="`+deadURL) {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range []string{
		`llmtop_requests_running{endpoint="` + srv.URL + `",engine="vllm",model="` + enginetest.VLLMModel + `"} 37`,
		`llmtop_endpoint_up{endpoint="` + srv.URL + `",engine="vllm"} 1`,
		`llmtop_endpoint_up{endpoint="` + deadURL + `",engine=""} 0`,
		`llmtop_endpoint_scrape_error{endpoint="` + deadURL + `",kind="refused"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("export ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("export still running 10 s after its context ended")
	}
	if t.Failed() {
		t.Log(body)
	}
}

// A taken port is a clear error before anything starts.
func TestExportListenTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	old := exportFlags.listen
	defer func() { exportFlags.listen = old }()
	exportFlags.listen = ln.Addr().String()
	err = runExport(context.Background(), &cobra.Command{}, []string{"http://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "--listen "+ln.Addr().String()) || !strings.Contains(err.Error(), "pick another port") {
		t.Fatalf("err = %v, want a --listen error saying what to do", err)
	}
	exportFlags.listen = "nonsense"
	err = runExport(context.Background(), &cobra.Command{}, []string{"http://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "want HOST:PORT") {
		t.Fatalf("err = %v for --listen nonsense, want the form it takes", err)
	}
}
