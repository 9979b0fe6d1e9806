package gpu

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/procfs"
)

// ProcFS is the /proc the process table reads: procfs.FS() in
// production, a fstest.MapFS in tests.
func ProcFS() fs.FS { return procfs.FS() }

// procTable maps the PIDs NVML reports to processes in /proc.
//
// The NVIDIA driver does not know PID namespaces: NVML always reports PIDs
// as the host sees them. Inside a container without --pid=host those PIDs
// mean nothing (or, by chance, another process), so when llmtop runs in a
// nested PID namespace every GPU process is Foreign, and the pane says how to
// fix it instead of showing an empty or wrong table.
type procTable struct {
	fsys   fs.FS
	nested int // 1 nested PID namespace, 0 not, -1 unknown (no NSpid line)
}

func newProcTable(fsys fs.FS) *procTable {
	return &procTable{fsys: fsys, nested: procfs.Nested(fsys)}
}

// process resolves one NVML PID.
func (t *procTable) process(pid int) model.GPUProcess {
	p := model.GPUProcess{PID: pid}
	if t.nested == 1 {
		p.Foreign = true
		return p
	}
	raw, err := fs.ReadFile(t.fsys, strconv.Itoa(pid)+"/cmdline")
	if err != nil {
		// Outside a container a missing PID has exited between the NVML
		// call and now; when we cannot tell, it is most likely foreign.
		if errors.Is(err, fs.ErrPermission) {
			p.Name = "(no permission)"
		} else if t.nested == -1 {
			p.Foreign = true
		} else {
			p.Name = "(exited)"
		}
		return p
	}
	args := model.SplitCmdline(raw)
	if len(args) == 0 {
		// Kernel threads and zombies have an empty cmdline; comm still names them.
		if c, err := fs.ReadFile(t.fsys, strconv.Itoa(pid)+"/comm"); err == nil {
			p.Name = strings.TrimSpace(string(c))
		}
		return p
	}
	p.Name = path.Base(args[0])
	p.Cmdline = strings.Join(args, " ")
	p.Engine = string(procfs.EngineOf(args))
	return p
}

// foreignNote says why processes are missing and how to see them.
func foreignNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d GPU process(es) belong to another PID namespace: run llmtop with --pid=host (docker) or hostPID: true (Kubernetes) to see which", n)
}
