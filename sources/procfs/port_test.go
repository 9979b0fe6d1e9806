package procfs

import (
	"io/fs"
	"net"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// The real /proc: a port this test listens on is held by this process.
func TestOwnerOfARealListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	o := Owner(FS(), port, time.Now())
	if o.PID != os.Getpid() || !strings.Contains(o.Cmdline, "procfs.test") {
		t.Fatalf("owner of :%d = %+v, want this test (pid %d)", port, o, os.Getpid())
	}
	ln.Close()
	if o := Owner(FS(), port, time.Now()); o.PID != 0 {
		t.Fatalf("after close: %+v, want nothing listening", o)
	}
}

// A fake /proc: vLLM loading (alive, not listening yet) while the port is
// free; then llama-server listening on 8080 over IPv6.
func TestOwnerFakeProc(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	fsys := fstest.MapFS{
		"stat":         {Data: []byte("cpu  1 2 3\nbtime 1799999000\n")},
		"self/status":  {Data: []byte("NSpid:\t4711\n")},
		"net/tcp":      {Data: []byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1\n")},
		"net/tcp6":     {Data: []byte("  sl  local_address rem_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout inode\n   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 1000 0 222 1\n")},
		"4711/cmdline": {Data: []byte("python3\x00-m\x00vllm.entrypoints.openai.api_server\x00--port\x008000\x00")},
		"4711/stat":    {Data: []byte("4711 (python3 (x)) S 1 4711 4711 0 -1 4194560 1 0 0 0 5 2 0 0 20 0 8 0 96200 1 1")},
		"5000/cmdline": {Data: []byte("/opt/llama-server\x00-m\x00tiny.gguf\x00")},
		"5000/stat":    {Data: []byte("5000 (llama-server) S 1 5000 5000 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99000 1 1")},
		"5000/fd/3":    {Data: []byte("socket:[222]"), Mode: fs.ModeSymlink},
		"5000/fd/4":    {Data: []byte("/dev/null"), Mode: fs.ModeSymlink},
		"6000/cmdline": {Data: []byte("bash\x00")},
		"6000/fd/0":    {Data: []byte("socket:[999]"), Mode: fs.ModeSymlink},
	}
	o := Owner(fsys, 8000, now)
	if o.PID != 0 || len(o.Engines) != 2 || o.Engines[0].PID != 4711 || o.Engines[0].Age != 38*time.Second || o.Note != "" {
		t.Fatalf("port 8000 = %+v, want nothing listening, vLLM 4711 up 38 s first", o)
	}
	o = Owner(fsys, 8080, now)
	if o.PID != 5000 || !strings.HasPrefix(o.Cmdline, "/opt/llama-server -m tiny.gguf") {
		t.Fatalf("port 8080 = %+v, want llama-server 5000", o)
	}
	fsys["self/status"] = &fstest.MapFile{Data: []byte("NSpid:\t7\t4711\n")}
	if o := Owner(fsys, 8000, now); !strings.Contains(o.Note, "PID namespace") {
		t.Fatalf("in a container: note %q", o.Note)
	}
}

// An engine's command line is shown on screen and saved in snapshots: its
// --api-key and any escape sequence in it are not.
func TestOwnerCmdlineRedacted(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	fsys := fstest.MapFS{
		"stat":         {Data: []byte("cpu  1 2 3\nbtime 1799999000\n")},
		"self/status":  {Data: []byte("NSpid:\t4711\n")},
		"4711/cmdline": {Data: []byte("vllm\x00serve\x00m\x1b]0;pwned\x07\x00--api-key\x00sk-SECRET\x00--max-num-batched-tokens\x008192\x00")},
		"4711/stat":    {Data: []byte("4711 (vllm) S 1 4711 4711 0 -1 4194560 1 0 0 0 5 2 0 0 20 0 8 0 96200 1 1")},
	}
	o := Owner(fsys, 8000, now)
	if len(o.Engines) != 1 {
		t.Fatalf("engines %+v", o.Engines)
	}
	if got := o.Engines[0].Cmdline; got != "vllm serve m --api-key REDACTED --max-num-batched-tokens 8192" {
		t.Errorf("cmdline %q", got)
	}
}
