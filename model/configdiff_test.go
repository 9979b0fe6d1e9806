package model

import (
	"strings"
	"testing"
)

// A llama-server restarted with -np 4 instead of -np 2 read "planned
// restart: cmdline /root/.cache/…/llama-server -m … -np 2 -t 1 → /root/…
// -np 4 -t 1": both command lines whole, the change lost in the paths.
func TestConfigDiffOfCommandLinesNamesTheChangedWords(t *testing.T) {
	bin := "/root/.cache/llmtop/engines/llama-server-nlc3.22.1/bin/llama-server -m /tmp/small.gguf --port 45083 --metrics"
	for _, c := range []struct{ a, b, want string }{
		{bin + " -np 2 -t 1", bin + " -np 4 -t 1", "cmdline -np 2 → -np 4"},
		{bin, bin + " -fa on", "cmdline (none) → -fa on"},
		{bin + " --no-webui", bin, "cmdline --no-webui → (none)"},
		{"vllm serve m --max-num-seqs 256", "vllm serve m --max-num-seqs 128 --enforce-eager", "cmdline --max-num-seqs 256 → --max-num-seqs 128 --enforce-eager"},
	} {
		got := ConfigDiff(map[string]string{"cmdline": c.a}, map[string]string{"cmdline": c.b})
		if strings.Join(got, "; ") != c.want {
			t.Errorf("ConfigDiff(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
	// other keys keep their whole values
	got := ConfigDiff(map[string]string{"args.max_num_seqs": "256"}, map[string]string{"args.max_num_seqs": "128"})
	if len(got) != 1 || got[0] != "args.max_num_seqs 256 → 128" {
		t.Errorf("%q", got)
	}
}
