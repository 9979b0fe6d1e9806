package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// closingServer answers one streamed chat request per connection, without
// "Connection: close", then closes the connection when the next request
// arrives on it — what llama-server does now and then after a streamed
// answer. It records whether any request carried an Idempotency-Key.
type closingServer struct {
	ln         net.Listener
	conns      atomic.Int32
	answered   atomic.Int32
	sawIdemKey atomic.Bool
	wg         sync.WaitGroup
}

func newClosingServer(t *testing.T) *closingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &closingServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c) }()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *closingServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for i := 0; ; i++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		if _, ok := req.Header["Idempotency-Key"]; ok {
			s.sawIdemKey.Store(true)
		}
		if i > 0 {
			return // the second request on a connection: close, answer nothing
		}
		body := `data: {"choices":[{"index":0,"delta":{"content":"hello there"},"finish_reason":null}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" + "data: [DONE]\n\n"
		s.answered.Add(1)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
}

// A server that closes a kept-alive connection after each streamed answer
// must not fail the next request with EOF: the client resends it on a new
// connection (net/http does so for a request marked idempotent).
func TestBenchResendsOnAClosedKeptAliveConnection(t *testing.T) {
	s := newClosingServer(t)
	q := &requester{client: newClient(1), url: "http://" + s.ln.Addr().String() + Chat.Path(), api: Chat, timeout: 10 * time.Second}
	defer q.client.CloseIdleConnections()
	const n = 6
	for i := 0; i < n; i++ {
		rec := report.Record{Index: i}
		q.do(context.Background(), []byte(`{"model":"m","stream":true}`), &rec)
		if !rec.OK {
			t.Fatalf("request %d failed: %s %s", i, rec.Err, rec.Detail)
		}
	}
	if got := s.answered.Load(); got != n {
		t.Errorf("server answered %d requests, want %d", got, n)
	}
	// Each request after the first met a closed connection and went on a new one.
	if got := s.conns.Load(); got < n {
		t.Errorf("%d connections for %d requests: the server's closes were not exercised", got, n)
	}
	if s.sawIdemKey.Load() {
		t.Error("the Idempotency-Key marker went on the wire; it should only mark the request for net/http")
	}
}
