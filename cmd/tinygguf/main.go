// Command tinygguf writes a tiny llama-architecture GGUF model with random weights that llama.cpp's
// llama-server and Ollama load and serve on a CPU. The real-engine tests use it because no model
// weights can be downloaded here; it is also handy for trying llmtop against a local engine:
//
//	go run ./cmd/tinygguf -o /tmp/tiny.gguf
//	llama-server -m /tmp/tiny.gguf --metrics --slots
//
// Requests never stop early: every special and byte token is pushed far below the printable ones,
// so each request runs to its max_tokens and streams one printable token per chunk.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/llmtop/llmtop/cmd/tinygguf/gguf"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tinygguf:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	s := gguf.Tiny
	fs := flag.NewFlagSet("tinygguf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "tiny.gguf", "output file (- for stdout)")
	fs.StringVar(&s.Name, "name", s.Name, "general.name")
	fs.IntVar(&s.Layers, "layers", s.Layers, "transformer blocks")
	fs.IntVar(&s.Embd, "embd", s.Embd, "embedding width")
	fs.IntVar(&s.Heads, "heads", s.Heads, "attention heads")
	fs.IntVar(&s.KVHeads, "kv-heads", s.KVHeads, "key/value heads (grouped-query attention)")
	fs.IntVar(&s.FFN, "ffn", s.FFN, "feed-forward width")
	fs.IntVar(&s.Context, "ctx", s.Context, "trained context length (llama.context_length)")
	fs.IntVar(&s.Words, "words", s.Words, "words of the built-in list in the vocabulary")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "random seed of the weights")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	f, err := gguf.Build(s)
	if err != nil {
		return err
	}
	if *out == "-" {
		return gguf.Write(stdout, f)
	}
	n, err := writeFile(*out, f)
	if err != nil {
		return err
	}
	v, _ := f.Get("llama.vocab_size")
	fmt.Fprintf(stdout, "wrote %s: %d bytes, llama %d layers × %d wide, %d/%d heads, ffn %d, vocab %v, ctx %d\n",
		*out, n, s.Layers, s.Embd, s.Heads, s.KVHeads, s.FFN, v, s.Context)
	return nil
}

// writeFile writes to a temporary name and renames, so a failure never leaves a truncated model
// that an engine would later refuse with a confusing error.
func writeFile(path string, f *gguf.File) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tinygguf-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	cw := &countWriter{w: tmp}
	if err := gguf.Write(cw, f); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	return cw.n, os.Rename(tmp.Name(), path)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
