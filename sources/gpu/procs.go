package gpu

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

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
//
// A process is resolved once and kept (seen): each refresh reads only its
// /proc/PID/stat, whose start time tells the same process from another
// that reused its PID. Its command line is read again every cmdlineEvery
// (a process may rename itself: vLLM's workers become VLLM::Worker).
type procTable struct {
	fsys   fs.FS
	nested int // 1 nested PID namespace, 0 not, -1 unknown (no NSpid line)
	seen   map[int]procSeen
	sweep  time.Time // when the processes not asked for since are next forgotten
}

// cmdlineEvery is how often a kept process's command line is read again.
const cmdlineEvery = 10 * time.Second

// procSeen is a process as resolved at at, for the process that started
// at start (clock ticks after boot), last asked for at used.
type procSeen struct {
	start    int64
	at, used time.Time
	p        model.GPUProcess
}

func newProcTable(fsys fs.FS) *procTable {
	return &procTable{fsys: fsys, nested: procfs.Nested(fsys), seen: map[int]procSeen{}}
}

// process is one NVML PID's process at now: the one resolved before while
// its PID is still the same process's and cmdlineEvery has not passed, else
// resolved again. Where its start time cannot be read (it exited, /proc
// refuses) it is resolved every time, and not kept.
func (t *procTable) process(pid int, now time.Time) model.GPUProcess {
	if t.nested == 1 {
		return t.resolve(pid)
	}
	if now.Sub(t.sweep) >= cmdlineEvery || now.Before(t.sweep) {
		for k, c := range t.seen {
			if now.Sub(c.used) >= cmdlineEvery || now.Before(c.used) {
				delete(t.seen, k)
			}
		}
		t.sweep = now
	}
	start, ok := procfs.StartTicks(t.fsys, pid)
	if !ok {
		delete(t.seen, pid)
		return t.resolve(pid)
	}
	c, kept := t.seen[pid]
	if !kept || c.start != start || now.Sub(c.at) >= cmdlineEvery || now.Before(c.at) {
		c = procSeen{start: start, at: now, p: t.resolve(pid)}
	}
	c.used = now
	t.seen[pid] = c
	return c.p
}

// resolve reads one NVML PID's process from /proc.
func (t *procTable) resolve(pid int) model.GPUProcess {
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
