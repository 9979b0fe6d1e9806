package main

import (
	"context"
	"fmt"
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
	"github.com/llmtop/llmtop/session"
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

// The exporter exports a fleet read through Prometheus: the source sends a
// whole refresh as one batch message, which the exporter's core used to
// drop (no llmtop_endpoint_* series at all). A fake fleet source sends one
// refresh of two replicas.
func TestExportServesAFleetBatch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fleet := sourcePlugin{Name: "fleet", Start: func(ctx context.Context, env *session.Env) error {
		now := time.Now()
		var b model.Batch
		for _, ep := range []string{"http://10.0.0.1:8000", "http://10.0.0.2:8000"} {
			b = append(b, model.Origin{Endpoint: ep, Name: "prod/" + ep[7:15], Source: model.SourcePrometheus})
			b = append(b, model.Scrape{Endpoint: ep, Time: now, Identity: model.Identity{Engine: model.VLLM, Models: []model.ModelInfo{{ID: "m"}}},
				Samples: []model.Sample{{Endpoint: ep, Model: "m", Time: now, Gauges: map[model.Gauge]float64{model.Running: 7}}}})
		}
		go env.Send(b)
		return nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go serveExport(ctx, ln, exporter.New("test"), exportSetup{Interval: 100 * time.Millisecond, Sources: []sourcePlugin{fleet}})
	body := waitMetrics(t, "http://"+ln.Addr().String()+"/metrics", `llmtop_endpoint_up{endpoint="http://10.0.0.2:8000"`)
	for _, want := range []string{
		`llmtop_endpoint_up{endpoint="http://10.0.0.1:8000",engine="vllm"} 1`,
		`llmtop_requests_running{endpoint="http://10.0.0.2:8000",engine="vllm",model="m"} 7`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s\n%s", want, body)
		}
	}
}

// waitMetrics reads url until its body holds want (15 s at most).
func waitMetrics(t *testing.T, url, want string) string {
	t.Helper()
	var body string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if body = string(b); strings.Contains(body, want) {
				break
			}
		}
	}
	return body
}

// Idle keep-alive connections past the limit do not lock Prometheus out:
// the longest-idle one is closed for each new one, and idle ones close
// after the idle timeout (they used to stay open forever: 19 000 of them
// took the exporter to 405 MB and its scrape timed out at the fd limit).
func TestExportLimitsIdleConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go serveExport(ctx, ln, exporter.New("test"), exportSetup{Interval: time.Second, MaxConns: 4, IdleTimeout: 2 * time.Second})
	addr := ln.Addr().String()
	// 12 clients each leave a keep-alive connection idle after one request.
	var idle []net.Conn
	for range 12 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		buf := make([]byte, 512)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(buf); err != nil {
			t.Fatalf("first request: %v", err)
		}
		idle = append(idle, c)
	}
	closed := func() int {
		n := 0
		for _, c := range idle {
			c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			if _, err := c.Read(make([]byte, 1)); err == io.EOF {
				n++
			}
		}
		return n
	}
	if n := closed(); n < 12-4 {
		t.Errorf("%d of 12 idle connections closed, want at least 8 (limit 4)", n)
	}
	// Prometheus still gets its scrape.
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("a scrape with the limit reached: %v", err)
	}
	resp.Body.Close()
	time.Sleep(3 * time.Second)
	if n := closed(); n != 12 {
		t.Errorf("%d of 12 idle connections closed after the idle timeout", n)
	}
}
