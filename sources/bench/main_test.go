package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// serveEnv, when set, turns the test binary into a zero-latency streaming
// server (for BenchmarkCapacity, so that the client's CPU can be measured
// apart from the server's): it prints its address and serves until killed.
const serveEnv = "LLMTOP_BENCH_FAKE_SERVE"

func TestMain(m *testing.M) {
	if spec := os.Getenv(serveEnv); spec != "" {
		f := &fakeEngine{flushes: map[string][]time.Time{}}
		var first, gap string
		var record int
		fmt.Sscanf(spec, "%d %s %s %d", &f.tokens, &first, &gap, &record)
		f.first, _ = time.ParseDuration(first)
		f.gap, _ = time.ParseDuration(gap)
		f.noRecord = record == 0
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(1)
		}
		fmt.Println(ln.Addr().String())
		(&http.Server{Handler: f}).Serve(ln)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startServer runs a fake engine in a child process (this test binary) and
// returns its URL: client and server then have separate runtimes, and the
// client's CPU can be measured alone.
func startServer(b *testing.B, tokens int, first, gap time.Duration, record bool) string {
	rec := 0
	if record {
		rec = 1
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s %s %d", serveEnv, tokens, first, gap, rec))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return "http://" + strings.TrimSpace(addr)
}

// remoteFlushes fetches a child server's flush times (Unix ns) by request
// ID, and forgets them.
func remoteFlushes(b *testing.B, url string) map[string][]int64 {
	var m map[string][]int64
	remoteDebug(b, url+"/debug/flushes", &m)
	return m
}

// remoteArrivals fetches when a child server began handling each request
// (Unix ns) by request ID, and forgets them.
func remoteArrivals(b *testing.B, url string) map[string]int64 {
	var m map[string]int64
	remoteDebug(b, url+"/debug/arrivals", &m)
	return m
}

func remoteDebug(b *testing.B, url string, into any) {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		b.Fatal(err)
	}
}
