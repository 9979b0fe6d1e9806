//go:build engines

package engines

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/cmd/tinygguf/gguf"
	"github.com/llmtop/llmtop/sources/engine"
)

// The llama-server test model is larger than gguf.Tiny so that a request is in flight long enough
// to be seen in /slots and /metrics (a few ms per token on one thread), yet loads in well under a
// second.
var llamaShape = gguf.Shape{Name: "llmtop-small", Layers: 4, Embd: 256, Heads: 8, KVHeads: 4, FFN: 768, Context: 4096, Words: 60, Seed: 7}

// Engine settings the tests assert against.
const (
	llamaSlots   = 2    // -np: a third concurrent request is deferred
	llamaCtx     = 8192 // -c: total, split across the slots
	ollamaModel  = "tiny"
	ollamaKeep   = 10 * time.Minute // OLLAMA_KEEP_ALIVE: /api/ps expires_at ≈ last use + this
	startTimeout = 90 * time.Second
)

type server struct {
	URL     string
	Port    int
	Proc    *proc
	Model   string // the GGUF path
	Version string // what the binary says about itself, for fixtures
	Tag     string // a file-name-safe version: llama.cpp's build_info, Ollama's version
}

type lazy struct {
	once sync.Once
	srv  *server
	err  error
}

var llamaSrv, ollamaSrv lazy

// llama returns the shared llama-server, starting it on first use.
func llama(t *testing.T) *server {
	t.Helper()
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	modelPath := writeModel(t, llamaShape)
	llamaSrv.once.Do(func() { llamaSrv.srv, llamaSrv.err = startLlama(bin, modelPath) })
	if llamaSrv.err != nil {
		t.Fatalf("llama-server did not start: %v", llamaSrv.err)
	}
	if llamaSrv.srv.Proc.exited() {
		t.Fatalf("llama-server died earlier in the run; log tail:\n%s", llamaSrv.srv.Proc.logTail(30))
	}
	return llamaSrv.srv
}

func startLlama(bin, modelPath string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"-m", modelPath, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--metrics", "--slots", "-np", strconv.Itoa(llamaSlots), "-c", strconv.Itoa(llamaCtx),
		"-t", "1", "-tb", "1", "--no-webui",
	}
	p, err := startProc("llama-server", bin, args, nil, filepath.Join(workDir, "llama-server.log"))
	if err != nil {
		return nil, err
	}
	s := &server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Port: port, Proc: p, Model: modelPath, Version: binVersion(bin, "--version")}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := waitHTTP(ctx, p, s.URL+"/health"); err != nil {
		return nil, err
	}
	var props llamaProps
	if err := getJSON(ctx, s.URL+"/props", &props); err != nil {
		return nil, err
	}
	s.Tag = props.BuildInfo
	return s, nil
}

// ollama returns the shared Ollama server with the tiny model created, starting it on first use.
func ollama(t *testing.T) *server {
	t.Helper()
	bin := engineBin(t, "LLMTOP_OLLAMA")
	modelPath := writeModel(t, gguf.Tiny)
	ollamaSrv.once.Do(func() { ollamaSrv.srv, ollamaSrv.err = startOllama(bin, modelPath) })
	if ollamaSrv.err != nil {
		t.Fatalf("ollama did not start: %v", ollamaSrv.err)
	}
	if ollamaSrv.srv.Proc.exited() {
		t.Fatalf("ollama died earlier in the run; log tail:\n%s", ollamaSrv.srv.Proc.logTail(30))
	}
	return ollamaSrv.srv
}

func startOllama(bin, modelPath string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return startOllamaWith(bin, modelPath, port, "ollama", 1)
}

// startOllamaWith starts an Ollama named name (its home and log are named for it) on port with
// OLLAMA_NUM_PARALLEL=parallel, creates the test model and waits until it answers.
func startOllamaWith(bin, modelPath string, port int, name string, parallel int) (*server, error) {
	home := filepath.Join(workDir, name+"-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	env := []string{
		"OLLAMA_HOST=127.0.0.1:" + strconv.Itoa(port),
		"OLLAMA_MODELS=" + filepath.Join(home, "models"),
		"HOME=" + home,
		"OLLAMA_KEEP_ALIVE=" + ollamaKeep.String(),
		"OLLAMA_NUM_PARALLEL=" + strconv.Itoa(parallel),
		"OLLAMA_NO_CLOUD=1",
	}
	p, err := startProc("ollama", bin, []string{"serve"}, env, filepath.Join(workDir, name+".log"))
	if err != nil {
		return nil, err
	}
	s := &server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Port: port, Proc: p, Model: modelPath}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := waitHTTP(ctx, p, s.URL+"/api/version"); err != nil {
		return nil, err
	}
	modelfile := filepath.Join(home, "Modelfile")
	mf := fmt.Sprintf("FROM %s\nPARAMETER num_thread 1\n", modelPath)
	if err := os.WriteFile(modelfile, []byte(mf), 0o644); err != nil {
		return nil, err
	}
	create := exec.CommandContext(ctx, bin, "create", ollamaModel, "-f", modelfile)
	create.Env = append(os.Environ(), env...)
	if out, err := create.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ollama create: %v: %s", err, out)
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := getJSON(ctx, s.URL+"/api/version", &v); err != nil {
		return nil, err
	}
	s.Version, s.Tag = v.Version, v.Version
	return s, nil
}

// binVersion runs the binary with flag and returns its output's first version line.
func binVersion(bin, flag string) string {
	out, _ := exec.Command(bin, flag).CombinedOutput()
	return firstLineWith(string(out), "version")
}

// startPrivateLlama starts a llama-server of the calling test's own on port (one thread, metrics on)
// and waits until it is healthy; extra flags are appended. The caller stops it (stopAll would too).
func startPrivateLlama(t *testing.T, bin, modelPath string, port int, name string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"-m", modelPath, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--metrics", "-t", "1", "--no-webui"}, extra...)
	p, err := startProc("llama-server", bin, args, nil, filepath.Join(workDir, "llama-server-"+name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := waitHTTP(ctx, p, fmt.Sprintf("http://127.0.0.1:%d/health", port)); err != nil {
		p.stop()
		t.Fatal(err)
	}
	return p
}

// scrapeConfig is how the tests scrape: a generous per-request timeout, because a CPU-bound engine on
// a shared 2-core machine can be slow to answer and these tests check values, not latency (one
// scrape under load once took longer than the 2 s default while other builds ran).
func scrapeConfig(url string) engine.Config {
	return engine.Config{URL: url, Timeout: 10 * time.Second}
}
