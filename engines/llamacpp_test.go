package engines

import "testing"

// The KV layout a llama-server run has, from its log line or its command
// line (llama.cpp's flags: this file's engine).
func TestLlamaKVLayout(t *testing.T) {
	for _, c := range []struct {
		log, cmdline   string
		slots          int
		known, unified bool
	}{
		{"true", "", 4, true, true},
		{"'false'", "llama-server -kvu", 2, true, false}, // the log wins: it is what the engine did
		{"", "llama-server -m m.gguf -c 2048", 4, true, true},
		{"", "llama-server -m m.gguf -c 2048 -np 2", 2, true, false},
		{"", "llama-server -m m.gguf --parallel=2", 2, true, false},
		{"", "llama-server -m m.gguf -np 2 -kvu", 2, true, true},
		{"", "llama-server -m m.gguf -np 2 --kv-unified", 2, true, true},
		{"", "llama-server -m m.gguf --no-kv-unified", 4, true, false},
		{"", "llama-server -m m.gguf -kvu -no-kvu", 4, true, false}, // the last flag wins
		{"", "llama-server -m m.gguf --parallel -1", 4, true, true},
		{"", "llama-server -m m.gguf -np", 4, false, false},
		{"", "llama-server -m m.gguf -np x", 4, false, false},
		{"", "llama-server -m m.gguf", 3, false, false}, // LLAMA_ARG_N_PARALLEL=3 leaves no trace on the command line
		{"", "", 4, false, false},
		{"", "/usr/bin/docker-proxy -proto tcp -host-ip 0.0.0.0 -host-port 8080 -container-ip 172.17.0.2 -container-port 8080", 4, false, false},
		{"", "/app/llama-server --host 0.0.0.0 -np 2", 2, true, false},
		{"", `C:\llama\llama-server.exe -m m.gguf`, 4, true, true},
		{"maybe", "", 4, false, false},
	} {
		l := LlamaKVLayout(c.log, c.cmdline, c.slots)
		if l.Known != c.known || l.Unified != c.unified || l.From == "" {
			t.Errorf("log %q cmdline %q slots %d: %+v, want known %v unified %v (with a reason)", c.log, c.cmdline, c.slots, l, c.known, c.unified)
		}
	}
}
