package main

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/host"
	"github.com/llmtop/llmtop/sources/procfs"
)

// The demo's simulated engine serves from llmtop's own process: the Host
// pane named llmtop as the engine with no word that it was llmtop itself
// (first-minute review). Here the port is this test process's own, found
// through the real /proc.
func TestHostSaysWhenTheEngineIsLlmtopItself(t *testing.T) {
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		t.Skip("no /proc here")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	url := "http://" + ln.Addr().String()
	cfg := host.Default()
	cfg.Kmsg = nil // the kernel log is not this test's
	h := newHostLooks([]string{url}, nil, cfg, procfs.FS())
	if h == nil {
		t.Fatal("a loopback endpoint is on this machine")
	}
	var note string
	for i := 0; i < 3 && note == ""; i++ {
		for _, m := range h.read(time.Now()) {
			if r, ok := m.(model.HostReading); ok && r.Endpoint == url {
				note = r.Note
			}
		}
	}
	if !strings.Contains(note, "simulated inside llmtop itself (pid ") {
		t.Errorf("note %q", note)
	}
	if n := selfNote(os.Getpid()+1, os.Getpid()); n != "" {
		t.Errorf("another process's port: %q", n)
	}
	if n := joinNotes("", "a", "", "b"); n != "a; b" {
		t.Errorf("joinNotes: %q", n)
	}
}
