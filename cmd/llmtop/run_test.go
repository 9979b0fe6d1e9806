package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/launch"
)

func TestSplitEnvTakesAssignmentsBeforeTheProgram(t *testing.T) {
	env, argv := splitEnv([]string{"OLLAMA_NUM_PARALLEL=4", "OLLAMA_HOST=127.0.0.1:11500", "ollama", "serve", "--x=1"})
	if !slices.Equal(env, []string{"OLLAMA_NUM_PARALLEL=4", "OLLAMA_HOST=127.0.0.1:11500"}) || !slices.Equal(argv, []string{"ollama", "serve", "--x=1"}) {
		t.Errorf("env %q argv %q", env, argv)
	}
	if _, argv := splitEnv([]string{"./bin/llmtop=x", "sim"}); len(argv) != 2 {
		t.Errorf("a path with = is a program: %q", argv)
	}
}

// On quit llmtop asks; s stops, anything else or no answer leaves the
// engine running.
func TestAskStop(t *testing.T) {
	dir := t.TempDir()
	p, err := launch.Start([]string{"sleep", "30"}, nil, filepath.Join(dir, "e.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	var out bytes.Buffer
	for in, want := range map[string]string{"s\n": "stop", "stop\n": "stop", "\n": "leave", "l\n": "leave", "": "leave"} {
		if got := askStop(context.Background(), strings.NewReader(in), &out, p); got != want {
			t.Errorf("answer %q: %s, want %s", in, got, want)
		}
	}
	if !strings.Contains(out.String(), "[s]top it or [l]eave it running?") {
		t.Errorf("the question: %q", out.String())
	}
	// A signal while asking leaves it running.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	if got := askStop(ctx, r, &out, p); got != "leave" {
		t.Errorf("cancelled while asking: %s", got)
	}
	// Leaving writes where the engine is; stopping stops it.
	s, err := launch.NewSession([]string{"sleep", "30"}, nil, filepath.Join(dir, "f.log"), "http://127.0.0.1:1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	finish(&out, s, false)
	if !strings.Contains(out.String(), "left the engine running (pid") || !strings.Contains(out.String(), "log: "+filepath.Join(dir, "f.log")) {
		t.Errorf("leave: %q", out.String())
	}
	out.Reset()
	finish(&out, s, true)
	if done, _ := s.Current().Exited(); !done || !strings.Contains(out.String(), "stopped on SIGTERM") {
		t.Errorf("stop: %q", out.String())
	}
}

func TestRunRefusesWhatItCannotWatch(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--", "myserver", "--port", "9"}, "--url"},
		{[]string{"run", "--url", "http://10.1.2.3:8000", "--", "myserver"}, "not on this machine's loopback"},
		{[]string{"run", "--on-quit", "maybe", "--", "vllm", "serve", "m"}, "--on-quit"},
	} {
		root.SetArgs(c.args)
		err := root.Execute()
		runFlags.onQuit, runFlags.url = "ask", ""
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("llmtop %v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
}
