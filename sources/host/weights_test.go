package host

import (
	"testing"
	"testing/fstest"
	"time"
)

// The index of meta-llama/Llama-3.1-8B-Instruct as the Hub serves it
// (huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/model.safetensors.index.json),
// cut to its metadata and one entry of its weight map.
const llamaIndex = `{"metadata": {"total_size": 16060522496}, "weight_map": {"lm_head.weight": "model-00004-of-00004.safetensors"}}`

func weightsProc(cmdline, environ string, files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{
		"stat":              {Data: []byte("cpu  1 0 1 10 0 0 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0 0 0\n")},
		"meminfo":           {Data: []byte("MemTotal: 1000 kB\nMemAvailable: 500 kB\n")},
		"vmstat":            {Data: []byte("pswpin 0\npswpout 0\n")},
		"100/stat":          {Data: []byte("100 (vllm) S 1 100 100 0 -1 4194560 1 0 0 0 10 5 0 0 20 0 4 0 100 1000 50 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")},
		"100/cmdline":       {Data: []byte(cmdline)},
		"100/environ":       {Data: []byte(environ)},
		"100/task/100/stat": {Data: []byte("100 (vllm) S 1 100 100 0 -1 4194560 1 0 0 0 10 5 0 0 20 0 4 0 100 1000 50 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")},
	}
	for p, d := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(d)}
	}
	return fsys
}

// Issue 27 item 5: the weights' size from the model's own files, as the
// engine sees them, whatever flag names the model.
func TestModelWeightsFromItsFiles(t *testing.T) {
	big := string(make([]byte, 3000))
	cases := []struct {
		name, cmdline, environ string
		files                  map[string]string
		want                   float64
		from                   string
	}{
		{"a cached Hub checkpoint (vllm serve org/name)", "vllm\x00serve\x00meta-llama/Llama-3.1-8B-Instruct\x00--port\x008000\x00", "HOME=/root\x00",
			map[string]string{
				"100/root/root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct/refs/main":                                      "0e9e39f\n",
				"100/root/root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f/model.safetensors.index.json": llamaIndex,
			}, 16060522496, "/root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f/model.safetensors.index.json"},
		{"a local folder (--model-path=/models/x), HF_HOME elsewhere", "python3\x00-m\x00sglang.launch_server\x00--model-path=/models/qwen\x00", "HF_HOME=/data/hf\x00",
			map[string]string{"100/root/models/qwen/model.safetensors": big}, 3000, "/models/qwen/model.safetensors"},
		{"a GGUF relative to the working directory", "llama-server\x00-m\x00models/tiny.gguf\x00-ngl\x00999\x00", "",
			map[string]string{"100/cwd/models/tiny.gguf": big}, 3000, "models/tiny.gguf"},
		{"nothing readable", "vllm\x00serve\x00org/missing\x00", "HOME=/root\x00", nil, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := New(Config{Proc: weightsProc(c.cmdline, c.environ, c.files)})
			hs, _ := r.Read(time.Unix(1000, 0), []Target{{Endpoint: "http://127.0.0.1:8000", PID: 100}})
			h := hs[0]
			if c.want == 0 {
				if h.Weights.OK {
					t.Errorf("weights %+v from %q", h.Weights, h.WeightsFrom)
				}
				return
			}
			if !h.Weights.OK || h.Weights.V != c.want || h.WeightsFrom != c.from {
				t.Errorf("weights %+v from %q, want %v from %q", h.Weights, h.WeightsFrom, c.want, c.from)
			}
		})
	}
}
