package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmtop/llmtop/beat"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/host"
	"github.com/llmtop/llmtop/sources/procfs"
)

// The host source: for each endpoint on this machine, the engine's
// processes (the port's owner and its descendants), host memory, the
// engine's cgroup, /dev/shm, disks and the kernel's OOM kills, every
// hostEvery (sources/host).

var hostFlags struct {
	noHost bool
}

// hostEvery spaces the looks: a CPU share needs a few seconds to mean
// something, and each look reads every thread of the engine.
const hostEvery = 3 * time.Second

func init() {
	registerSource(sourcePlugin{
		Name: "host",
		Flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&hostFlags.noHost, "no-host", false, "do not read the engine's processes, memory, cgroup and disks from /proc (local endpoints)")
		},
		Start: func(ctx context.Context, env *session.Env) error {
			go runHost(ctx, env.URLs, env.Logs, host.Default(), procfs.FS(), env.Send)
			return nil
		},
		// runHost reads only the endpoints on this machine
		On: func(env *session.Env) bool {
			return !hostFlags.noHost && slices.ContainsFunc(env.URLs, func(u string) bool { return newPortLook(u) != nil })
		},
	})
}

// hostTarget follows one local endpoint's port owner.
type hostTarget struct {
	look   *portLook
	pid    int
	sock   procfs.Socket // where pid holds the port (once seen)
	lookAt time.Time
}

// ownerEvery is how often a known owner is looked up again (a restart
// gives the port to a new process).
const ownerEvery = 30 * time.Second

// runHost reads the host for the local endpoints among urls until ctx
// ends, sending model.HostReading and kernel OOM-kill events.
func runHost(ctx context.Context, urls, extraLogs []string, cfg host.Config, proc fs.FS, send func(any)) {
	if hostFlags.noHost {
		return
	}
	h := newHostLooks(urls, extraLogs, cfg, proc)
	if h == nil {
		return
	}
	// on the beat grid (package beat): a look falls in the wake-up of a
	// scrape, not in one of its own
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		start := time.Now()
		for _, m := range h.read(start) {
			send(m)
		}
		t.Reset(time.Until(beat.After(start, hostEvery/2, hostEvery)))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// hostLooks reads the host around every local endpoint: the port owners,
// followed, and one host.Reader that keeps the counters between looks.
type hostLooks struct {
	self   int    // llmtop's own pid
	nested string // nestedNote, read once: a process's PID namespace does not change
	ts     []*hostTarget
	r      *host.Reader
	proc   fs.FS
	logs   []string
}

// newHostLooks is nil when no endpoint is on this machine. extraLogs are
// the logs a face attaches besides --log (llmtop run's engine's).
func newHostLooks(urls, extraLogs []string, cfg host.Config, proc fs.FS) *hostLooks {
	h := &hostLooks{r: host.New(cfg), proc: proc, self: os.Getpid()}
	for _, u := range urls {
		if l := newPortLook(u); l != nil {
			h.ts = append(h.ts, &hostTarget{look: l})
		}
	}
	if len(h.ts) == 0 {
		return nil
	}
	h.nested = nestedNote(proc)
	if len(urls) == 1 { // a log attached to the one endpoint
		h.logs = append(slices.Clip(logFlags.files), extraLogs...)
	}
	return h
}

// read looks once: a model.HostReading per endpoint, then the kernel's
// OOM kills of their processes (model.Event).
func (h *hostLooks) read(now time.Time) []any {
	targets := make([]host.Target, 0, len(h.ts))
	for _, t := range h.ts {
		t.resolve(h.proc, now)
		targets = append(targets, host.Target{Endpoint: t.look.id, PID: t.pid, Logs: h.logs, Note: joinNotes(h.nested, selfNote(t.pid, h.self))})
	}
	hs, evs := h.r.Read(now, targets)
	out := make([]any, 0, len(hs)+len(evs))
	for _, x := range hs {
		out = append(out, x)
	}
	for _, ev := range evs {
		out = append(out, ev)
	}
	return out
}

// resolve finds the port's owner when unknown, gone, or no longer holding
// the port: a known owner is checked by its PID every look and by its
// listening socket every ownerEvery (one readlink of the descriptor it was
// last seen at, learnt by the look that found it; the kernel's socket
// tables are read only when that moved,
// since their read walks every connection on the machine: about 5 ms of
// CPU here, a tenth of the monitor's steady second); only one that lost
// the port is looked for among every process (which costs a read of each
// one's command line).
func (t *hostTarget) resolve(proc fs.FS, now time.Time) {
	if t.pid > 0 {
		if _, err := fs.Stat(proc, strconv.Itoa(t.pid)); err == nil {
			if now.Sub(t.lookAt) < ownerEvery {
				return
			}
			if t.sock.HeldBy(proc, t.pid) {
				t.lookAt = now
				return
			}
			if s, ok := procfs.Listener(proc, t.pid, t.look.port); ok {
				t.sock, t.lookAt = s, now
				return
			}
		}
	}
	t.lookAt = now
	o, sock := procfs.OwnerAt(proc, t.look.port, now)
	t.pid, t.sock = o.PID, sock
}

// selfNote says when the port's owner is llmtop itself: the simulated
// engine of the demo (or `llmtop sim` in-process) serves from llmtop's own
// process, so the process figures are llmtop's, simulator included, not an
// engine's.
func selfNote(pid, self int) string {
	if pid == 0 || pid != self {
		return ""
	}
	return fmt.Sprintf("the engine on this port is simulated inside llmtop itself (pid %d): the process figures are llmtop's own, its simulator included", pid)
}

func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

func nestedNote(proc fs.FS) string {
	if procfs.Nested(proc) == 1 {
		return "llmtop runs in a container's PID namespace: only its own processes are visible, so an engine elsewhere (and the kernel's OOM lines about it) may be hidden; run with --pid=host (Kubernetes: hostPID: true)"
	}
	return ""
}
