package gpu

import (
	"fmt"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

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
		p := newProcTable(fsys).resolve(77)
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
		p := newProcTable(fsys).resolve(c.pid)
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
	if p := newProcTable(denyFS{}).resolve(55); p.Name != "(no permission)" || p.Foreign {
		t.Errorf("%+v", p)
	}
}

// procStat is a /proc/PID/stat line of a process started at start (clock
// ticks after boot): field 22, the 20th after the command's ')'.
func procStat(pid int, comm string, start int64) *fstest.MapFile {
	return &fstest.MapFile{Data: fmt.Appendf(nil, "%d (%s) S 1 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 %d 1000000 500 18446744073709551615\n", pid, comm, start)}
}

// countFS counts the reads of each file.
type countFS struct {
	fstest.MapFS
	reads map[string]int
}

func (c countFS) ReadFile(name string) ([]byte, error) {
	c.reads[name]++
	return c.MapFS.ReadFile(name)
}

func TestProcessKeptWhileItsPIDIsTheSameProcess(t *testing.T) {
	fsys := countFS{MapFS: fstest.MapFS{
		"self/status": {Data: []byte("NSpid:\t10\n")},
		"77/stat":     procStat(77, "python3", 5000),
		"77/cmdline":  {Data: []byte("python3\x00-m\x00vllm.entrypoints.openai.api_server\x00--api-key\x00sk-secret\x00")},
	}, reads: map[string]int{}}
	tab := newProcTable(fsys)
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	for i := range 5 {
		p := tab.process(77, at.Add(time.Duration(i)*time.Second))
		if p.Name != "python3" || p.Engine != string(model.VLLM) || p.PID != 77 {
			t.Fatalf("second %d: %+v", i, p)
		}
	}
	if n := fsys.reads["77/cmdline"]; n != 1 {
		t.Errorf("the command line of one process was read %d times in 5 refreshes, want once", n)
	}
	if n := fsys.reads["77/stat"]; n != 5 {
		t.Errorf("its stat was read %d times in 5 refreshes, want every one (PID reuse)", n)
	}

	// The PID is another process's now: its own name at once.
	fsys.MapFS["77/stat"] = procStat(77, "jupyter", 9000)
	fsys.MapFS["77/cmdline"] = &fstest.MapFile{Data: []byte("/usr/bin/jupyter-lab\x00--port\x008888\x00")}
	if p := tab.process(77, at.Add(5*time.Second)); p.Name != "jupyter-lab" || p.Engine != "" {
		t.Errorf("a PID reused by another process: %+v, want jupyter-lab", p)
	}

	// The same process renames itself (setproctitle): seen within cmdlineEvery.
	fsys.MapFS["77/cmdline"] = &fstest.MapFile{Data: []byte("VLLM::EngineCore")}
	if p := tab.process(77, at.Add(6*time.Second)); p.Name != "jupyter-lab" {
		t.Errorf("kept between reads: %+v", p)
	}
	if p := tab.process(77, at.Add(5*time.Second+cmdlineEvery)); p.Name != "VLLM::EngineCore" || p.Engine != string(model.VLLM) {
		t.Errorf("renamed %v later: %+v, want VLLM::EngineCore", cmdlineEvery, p)
	}

	// It exits: said so, and forgotten.
	delete(fsys.MapFS, "77/stat")
	delete(fsys.MapFS, "77/cmdline")
	if p := tab.process(77, at.Add(20*time.Second)); p.Name != "(exited)" {
		t.Errorf("exited: %+v", p)
	}
	if len(tab.seen) != 0 {
		t.Errorf("an exited process is still kept: %v", tab.seen)
	}
}

func TestProcessesNoLongerOnTheGPUAreForgotten(t *testing.T) {
	fsys := fstest.MapFS{"self/status": {Data: []byte("NSpid:\t10\n")}}
	for _, pid := range []int{11, 12} {
		fsys[fmt.Sprintf("%d/stat", pid)] = procStat(pid, "python3", 100)
		fsys[fmt.Sprintf("%d/cmdline", pid)] = &fstest.MapFile{Data: []byte("python3\x00serve.py\x00")}
	}
	tab := newProcTable(fsys)
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	tab.process(11, at)
	tab.process(12, at)
	for i := 1; i <= 2*int(cmdlineEvery/time.Second); i++ {
		tab.process(11, at.Add(time.Duration(i)*time.Second))
	}
	if _, ok := tab.seen[12]; ok || len(tab.seen) != 1 {
		t.Errorf("kept %v, want only PID 11 (12 left the GPU %v ago)", tab.seen, 2*cmdlineEvery)
	}
}
