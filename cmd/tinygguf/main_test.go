package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/cmd/tinygguf/gguf"
)

func TestRunWritesShapeFromFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	var out, errb bytes.Buffer
	err := run([]string{"-o", path, "-layers", "3", "-embd", "128", "-heads", "8", "-kv-heads", "4", "-ffn", "256", "-ctx", "1024", "-name", "x"}, &out, &errb)
	if err != nil {
		t.Fatalf("run: %v (%s)", err, errb.String())
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, _, err := gguf.Read(fh)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"llama.block_count": uint32(3), "llama.embedding_length": uint32(128), "llama.attention.head_count": uint32(8),
		"llama.attention.head_count_kv": uint32(4), "llama.feed_forward_length": uint32(256),
		"llama.context_length": uint32(1024), "general.name": "x", "llama.rope.dimension_count": uint32(16),
	} {
		if got, _ := f.Get(k); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	q, _ := f.Tensor("blk.2.attn_k.weight")
	if q == nil || q.Dims[0] != 128 || q.Dims[1] != 64 {
		t.Errorf("blk.2.attn_k.weight = %+v, want dims [128 64]", q)
	}
	if !strings.Contains(out.String(), "3 layers × 128 wide") {
		t.Errorf("summary %q", out.String())
	}
}

func TestRunRejectsBadShapeAndKeepsNoFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	var out, errb bytes.Buffer
	if err := run([]string{"-o", path, "-heads", "5"}, &out, &errb); err == nil {
		t.Fatal("heads 5 with embd 64 accepted")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a file was left behind: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := run([]string{"extra"}, &out, &errb); err == nil {
		t.Error("stray argument accepted")
	}
}
