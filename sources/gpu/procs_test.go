package gpu

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/llmtop/llmtop/model"
)

func TestEngineOfCmdline(t *testing.T) {
	for _, c := range []struct {
		cmdline string
		want    model.Engine
		name    string
	}{
		{"/usr/bin/python3\x00-m\x00vllm.entrypoints.openai.api_server\x00--model\x00x\x00", model.VLLM, "python3"},
		{"/opt/venv/bin/vllm\x00serve\x00Qwen/Qwen3-8B\x00", model.VLLM, "vllm"},
		{"VLLM::EngineCore" + string(make([]byte, 30)), model.VLLM, "VLLM::EngineCore"},
		{"VLLM::Worker_TP1_EP1   ", model.VLLM, "VLLM::Worker_TP1_EP1"},
		{"python3\x00-m\x00sglang.launch_server\x00--model-path\x00m\x00", model.SGLang, "python3"},
		{"sglang::scheduler_TP0", model.SGLang, "sglang::scheduler_TP0"},
		{"text-generation-launcher\x00--model-id\x00m\x00", model.TGI, "text-generation-launcher"},
		{"/opt/conda/bin/python3.11\x00/opt/conda/bin/text-generation-server\x00serve\x00m\x00", model.TGI, "python3.11"},
		{"/usr/local/bin/text-generation-router\x00--port\x0080\x00", model.TGI, "text-generation-router"},
		{"./build/bin/llama-server\x00-m\x00model.gguf\x00-ngl\x0099\x00", model.LlamaCpp, "llama-server"},
		{"/usr/bin/ollama\x00runner\x00--ollama-engine\x00--port\x0041235\x00", model.Ollama, "ollama"},
		{"/usr/lib/ollama/ollama_llama_server\x00runner\x00", model.Ollama, "ollama_llama_server"},
		{"/usr/local/bin/trtllm-serve\x00serve\x00m\x00", model.TRTLLM, "trtllm-serve"},
		{"python3\x00-m\x00tensorrt_llm.commands.serve\x00", model.TRTLLM, "python3"},
		{"/opt/tritonserver/bin/tritonserver\x00--model-repository=/models\x00", model.Triton, "tritonserver"},
		{"python3\x00my_vllm_test.py\x00", model.Unknown, "python3"},
		{"python3\x00train.py\x00", model.Unknown, "python3"},
	} {
		fsys := fstest.MapFS{
			"self/status": {Data: []byte("NSpid:\t77\n")},
			"77/cmdline":  {Data: []byte(c.cmdline)},
		}
		p := newProcTable(fsys).process(77)
		if model.Engine(p.Engine) != c.want || p.Name != c.name || p.Foreign {
			t.Errorf("%q: engine %q name %q foreign %v, want %q %q", c.cmdline, p.Engine, p.Name, p.Foreign, c.want, c.name)
		}
	}
}

func TestProcessNamespaces(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  string
		pid     int
		foreign bool
		pname   string
	}{
		{"host, exists", "NSpid:\t10\n", 77, false, "vllm"},
		{"host, exited", "NSpid:\t10\n", 88, false, "(exited)"},
		{"container, exists by chance", "NSpid:\t5000\t10\n", 77, true, ""},
		{"container, missing", "NSpid:\t5000\t10\n", 88, true, ""},
		{"no NSpid (old kernel), missing", "Name:\tx\n", 88, true, ""},
		{"no status at all, exists", "", 77, false, "vllm"},
		{"kernel thread", "NSpid:\t10\n", 99, false, "kworker/0:1"},
	} {
		fsys := fstest.MapFS{
			"77/cmdline": {Data: []byte("vllm\x00serve\x00")},
			"99/cmdline": {Data: nil},
			"99/comm":    {Data: []byte("kworker/0:1\n")},
		}
		if c.status != "" {
			fsys["self/status"] = &fstest.MapFile{Data: []byte(c.status)}
		}
		p := newProcTable(fsys).process(c.pid)
		if p.PID != c.pid || p.Foreign != c.foreign || p.Name != c.pname {
			t.Errorf("%s: %+v", c.name, p)
		}
	}
	if foreignNote(0) != "" {
		t.Error("no foreign processes, no note")
	}
}

// denyFS refuses every open, as /proc does for a process we may not read.
type denyFS struct{}

func (denyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
}

func TestProcessNoPermission(t *testing.T) {
	if p := newProcTable(denyFS{}).process(55); p.Name != "(no permission)" || p.Foreign {
		t.Errorf("%+v", p)
	}
}
