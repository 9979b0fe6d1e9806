package procfs

import (
	"io/fs"
	"net"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/llmtop/llmtop/model"
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
	// Issue 31 item 27: the holder's start time is known (the engine's
	// uptime where its metrics do not say): this test started a moment ago.
	if age := time.Since(o.Started); o.Started.IsZero() || age < 0 || age > 10*time.Minute {
		t.Errorf("started %v (age %v), want this test's start", o.Started, age)
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
	// llama-server holds 8080: it is not 8000's engine.
	if o.PID != 0 || len(o.Engines) != 1 || o.Engines[0].PID != 4711 || o.Engines[0].Age != 38*time.Second || o.Note != "" {
		t.Fatalf("port 8000 = %+v, want nothing listening, vLLM 4711 up 38 s alone", o)
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

// Issue 31, item 9: "engine process alive: PID … python3 serve.py …
// vllm.txt": a process with vllm in an argument (a file name, tail -F
// vllm.log, llmtop's own --log) was taken for the engine, and an engine was
// never tied to the port. Only a process that runs an engine counts, and
// only for the port it holds or names (or its engine's default).
func TestEngineProcessIsWhatRunsAndServesThePort(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	proc := func(cmd ...string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(strings.Join(cmd, "\x00") + "\x00")}
	}
	fsys := fstest.MapFS{
		"stat":        {Data: []byte("btime 1799999000\n")},
		"self/status": {Data: []byte("NSpid:\t4711\n")},
		"100/cmdline": proc("python3", "serve.py", "--port", "8000", "--log", "/tmp/vllm.txt"),
		"101/cmdline": proc("tail", "-F", "/var/log/vllm.log"),
		"102/cmdline": proc("/usr/local/bin/llmtop", "--log", "vllm.log", "http://127.0.0.1:8000"),
		"103/cmdline": proc("python3", "-m", "vllm.entrypoints.openai.api_server", "--port", "8001"),
		"104/cmdline": proc("vim", "vllm_notes.md"),
		"105/cmdline": proc("python3", "-m", "sglang.launch_server", "--model-path", "m"), // default 30000
	}
	if o := Owner(fsys, 8000, now); len(o.Engines) != 0 || !strings.Contains(o.Describe(), "no engine process found") {
		t.Fatalf("port 8000: %q (engines %+v)", o.Describe(), o.Engines)
	}
	fsys["106/cmdline"] = proc("/opt/venv/bin/python3.11", "/opt/venv/bin/vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000")
	fsys["107/cmdline"] = proc("VLLM::EngineCore")
	o := Owner(fsys, 8000, now)
	var pids []int
	for _, e := range o.Engines {
		pids = append(pids, e.PID)
	}
	if len(pids) != 2 || !strings.Contains(o.Describe(), "engine process alive: PID") || strings.Contains(o.Describe(), "serve.py") {
		t.Fatalf("port 8000: %q, engines %v: want vllm serve (106) and its EngineCore (107)", o.Describe(), pids)
	}
	if o := Owner(fsys, 30000, now); len(o.Engines) != 1 || o.Engines[0].PID != 105 {
		t.Fatalf("port 30000: %+v, want SGLang on its default port", o.Engines)
	}
	for _, c := range []struct {
		args []string
		want model.Engine
	}{
		{[]string{"python3", "serve.py", "vllm.txt"}, model.Unknown},
		{[]string{"tail", "-F", "vllm.log"}, model.Unknown},
		{[]string{"uv", "run", "vllm", "serve", "m"}, model.VLLM},
		{[]string{"python", "-u", "-m", "text_generation_server.cli", "serve"}, model.TGI},
		{[]string{"sglang::scheduler"}, model.SGLang},
		{[]string{"/usr/bin/llama-server", "-m", "x.gguf"}, model.LlamaCpp},
	} {
		if got := EngineOf(c.args); got != c.want {
			t.Errorf("EngineOf(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// A SIGSTOPped engine (state T) still holds its port: Owner says it is
// stopped, and Describe says how to resume it.
func TestOwnerOfAStoppedProcess(t *testing.T) {
	fsys := fstest.MapFS{
		"stat":        {Data: []byte("btime 1799999000\n")},
		"self/status": {Data: []byte("NSpid:\t4711\n")},
		"net/tcp": {Data: []byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
			"   0: 0100007F:C3AF 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1\n")},
		"100/cmdline": {Data: []byte("/opt/llama-server\x00--port\x0050095\x00")},
		"100/stat":    {Data: []byte("100 (llama-server) T 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99000 1 1")},
		"100/fd/3":    {Data: []byte("socket:[111]"), Mode: fs.ModeSymlink},
	}
	o := Owner(fsys, 50095, time.Unix(1_800_000_000, 0))
	if o.PID != 100 || !o.Stopped || !strings.Contains(o.Describe(), "which is stopped") || !strings.Contains(o.Describe(), "kill -CONT 100") {
		t.Fatalf("%+v: %s", o, o.Describe())
	}
	fsys["100/stat"] = &fstest.MapFile{Data: []byte("100 (llama-server) S 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99000 1 1")}
	if o := Owner(fsys, 50095, time.Unix(1_800_000_000, 0)); o.Stopped || strings.Contains(o.Describe(), "stopped") {
		t.Fatalf("sleeping: %+v", o)
	}
}
