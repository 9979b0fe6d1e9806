// Command monitor-floor is the least a Go monitor can cost on this machine:
// once a second, on the whole second, one HTTP GET of a metrics URL read
// whole and one write of a frame's bytes to the terminal, on one processor,
// and nothing else: no parse, no core, no layout. scripts/monitor-cost.sh
// runs it in llmtop's place with FLOOR=go, so that llmtop's cost can be
// read against what the Go runtime, the loopback request and the terminal
// cost by themselves.
//
//	go run ./scripts/monitor-floor URL [FRAME_BYTES]
package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: monitor-floor URL [FRAME_BYTES]")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1)
	url, size := os.Args[1], 12000 // about what a 200×60 frame of changed lines writes
	if len(os.Args) > 2 {
		if n, err := strconv.Atoi(os.Args[2]); err == nil && n > 0 {
			size = n
		}
	}
	frame := bytes.Repeat([]byte("x"), size)
	copy(frame, "\x1b[H")
	var body bytes.Buffer
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		now := time.Now()
		time.Sleep(now.Truncate(time.Second).Add(time.Second).Sub(now))
		if resp, err := client.Get(url); err == nil {
			body.Reset()
			_, _ = io.Copy(&body, resp.Body)
			resp.Body.Close()
		}
		_, _ = os.Stdout.Write(frame)
	}
}
