package procfs

import (
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
)

// Engines on ports of their own (llama-server --port 50095, ollama serve
// on OLLAMA_HOST=127.0.0.1:59029): discovery must find them, not only the
// usual ports. Ollama's runner (a child of ollama serve) listens too, on a
// port that is not the API; a listener on another address (10.0.0.5) is
// not reachable on 127.0.0.1; bash holding a socket is no engine.
func TestEnginePorts(t *testing.T) {
	tcp := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 0100007F:C3AF 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1\n" + // 127.0.0.1:50095 llama-server
		"   1: 0100007F:E695 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1\n" + // 127.0.0.1:59029 ollama serve
		"   2: 0100007F:A000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1\n" + // the runner's port
		"   3: 0500000A:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 444 1\n" + // 10.0.0.5:8080
		"   4: 0100007F:C3AF 0100007F:9000 01 00000000:00000000 00:00000000 00000000     0        0 555 1\n" + // an established connection
		"   5: 00000000:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 666 1\n" // 0.0.0.0:5432 bash's
	link := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s), Mode: fs.ModeSymlink} }
	fsys := fstest.MapFS{
		"net/tcp":      {Data: []byte(tcp)},
		"100/cmdline":  {Data: []byte("/opt/llama-server\x00-m\x00small.gguf\x00--port\x0050095\x00")},
		"100/stat":     {Data: []byte("100 (llama-server) S 1 100 100 0 -1 0")},
		"100/fd/3":     link("socket:[111]"),
		"100/fd/4":     link("socket:[555]"),
		"200/cmdline":  {Data: []byte("/usr/bin/ollama\x00serve\x00")},
		"200/stat":     {Data: []byte("200 (ollama) S 1 200 200 0 -1 0")},
		"200/fd/5":     link("socket:[222]"),
		"201/cmdline":  {Data: []byte("/usr/bin/ollama\x00runner\x00--model\x00/m\x00--port\x0040960\x00")},
		"201/stat":     {Data: []byte("201 (ollama) S 200 200 200 0 -1 0")},
		"201/fd/3":     link("socket:[333]"),
		"300/cmdline":  {Data: []byte("/opt/llama-server\x00--host\x0010.0.0.5\x00")},
		"300/stat":     {Data: []byte("300 (llama-server) S 1 300 300 0 -1 0")},
		"300/fd/3":     link("socket:[444]"),
		"400/cmdline":  {Data: []byte("bash\x00")},
		"400/stat":     {Data: []byte("400 (bash) S 1 400 400 0 -1 0")},
		"400/fd/3":     link("socket:[666]"),
		"self/status":  {Data: []byte("NSpid:\t4711\n")},
		"stat":         {Data: []byte("btime 1799999000\n")},
		"999/cmdline":  {Data: []byte("")},
		"1000/cmdline": {Data: []byte("/opt/llama-server\x00")}, // no stat, no fds: nothing to read
	}
	if got, want := EnginePorts(fsys), []int{50095, 59029}; !slices.Equal(got, want) {
		t.Fatalf("EnginePorts = %v, want %v", got, want)
	}
	if got := EnginePorts(fstest.MapFS{}); got != nil {
		t.Fatalf("no /proc: %v", got)
	}
}
