package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/logs"
	"github.com/llmtop/llmtop/sources/procfs"
)

// A log's zone-less stamps are read in the zone of the engine holding the
// endpoint's port on this machine (a process started with TZ=Asia/Kolkata
// here), and as an unknown zone's for an endpoint elsewhere; a command
// whose lines carry their own zone needs none.
func TestLogZoneIsTheEnginesProcess(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to play an engine holding a port")
	}
	if _, err := time.LoadLocation("Asia/Kolkata"); err != nil {
		t.Skip("no tzdata: ", err)
	}
	// a process that reads as vLLM ("python3 …/vllm serve") and listens
	script := filepath.Join(t.TempDir(), "vllm")
	if err := os.WriteFile(script, []byte("import socket, time\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen()\nprint(s.getsockname()[1], flush=True)\ntime.sleep(60)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script, "serve")
	cmd.Env = append(os.Environ(), "TZ=Asia/Kolkata")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	zone := logZone(logs.Input{File: "engine.log"}, &session.Env{URLs: []string{url}})
	loc, known := zone()
	if !known {
		t.Fatalf("the engine's zone is not known (owner %+v)", procfs.Owner(procfs.FS(), port, time.Now()))
	}
	if _, off := time.Date(2026, 11, 27, 1, 23, 45, 0, loc).Zone(); off != 19800 {
		t.Errorf("zone %v: offset %d, want +05:30 (the engine's TZ)", loc, off)
	}

	if _, known := logZone(logs.Input{File: "engine.log"}, &session.Env{URLs: []string{"http://10.1.2.3:8000"}})(); known {
		t.Error("a remote engine's zone read as known")
	}
	if _, known := logZone(logs.Input{File: "engine.log"}, &session.Env{URLs: []string{url, "http://127.0.0.1:1"}})(); known {
		t.Error("a log of one of several endpoints read in a zone as known")
	}
	if logZone(logs.Input{Command: "docker logs -f --timestamps x", Stamps: logs.StampsPrefix}, &session.Env{URLs: []string{url}}) != nil {
		t.Error("docker's stamped lines given a zone")
	}
}

// The process whose zone a log's stamps are read in: the engine, not a
// port forwarder in front of it.
func TestEnginePIDBehindAPort(t *testing.T) {
	for _, c := range []struct {
		o    model.PortOwner
		want int
	}{
		{model.PortOwner{PID: 7, Cmdline: "python3 -m vllm.entrypoints.openai.api_server", Engines: []model.Process{{PID: 7}}}, 7},
		{model.PortOwner{PID: 3, Cmdline: "/usr/bin/docker-proxy -proto tcp -host-port 8000", Engines: []model.Process{{PID: 9}}}, 9},
		{model.PortOwner{PID: 3, Cmdline: "/usr/bin/docker-proxy -proto tcp -host-port 8000"}, 0},
		{model.PortOwner{PID: 4, Cmdline: "ssh -N -L 8000:gpu1:8000 gpu1"}, 0},
		{model.PortOwner{PID: 5, Cmdline: "./my-server --port 8000"}, 5},
		{model.PortOwner{PID: 3, Cmdline: "haproxy", Engines: []model.Process{{PID: 8}, {PID: 9}}}, 0},
	} {
		if got := enginePID(c.o); got != c.want {
			t.Errorf("%q with engines %v: %d, want %d", c.o.Cmdline, c.o.Engines, got, c.want)
		}
	}
}
