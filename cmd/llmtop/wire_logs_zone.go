package main

import (
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/logs"
	"github.com/llmtop/llmtop/sources/procfs"
)

// engineZone is the zone of the engine holding a local endpoint's port, for
// its log's zone-less stamps (vLLM's "INFO 11-27 01:23:45"): read from its
// process (procfs.Zone: its TZ, its root's /etc/localtime), looked up again
// every zoneEvery while unknown and when the process is gone.
type engineZone struct {
	proc fs.FS
	port int

	mu    sync.Mutex
	at    time.Time // the last look
	pid   int
	loc   *time.Location
	known bool
}

// zoneEvery spaces the looks for the port's owner (a read of every
// process's command line).
const zoneEvery = 30 * time.Second

// zone is logs.Options.Zone: called by the log's follower for each line.
func (z *engineZone) zone() (*time.Location, bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	now := time.Now()
	if !z.at.IsZero() && now.Sub(z.at) < zoneEvery {
		return z.loc, z.known
	}
	z.at = now
	if z.known {
		if _, err := fs.Stat(z.proc, strconv.Itoa(z.pid)); err == nil {
			return z.loc, z.known
		}
	}
	z.loc, z.known = time.Local, false
	if z.pid = enginePID(procfs.Owner(z.proc, z.port, now)); z.pid > 0 {
		if loc, _, ok := procfs.Zone(z.proc, z.pid); ok {
			z.loc, z.known = loc, true
		}
	}
	return z.loc, z.known
}

// enginePID is the engine process behind a port: its holder when that
// looks like an engine, else the one engine process that names the port
// (an engine in a container, the port held by docker-proxy: the proxy's
// zone is the host's, the engine's its container's), else a holder that
// is no port forwarder (an engine llmtop does not recognise); 0 when none.
func enginePID(o model.PortOwner) int {
	for _, p := range o.Engines {
		if p.PID == o.PID {
			return p.PID
		}
	}
	switch {
	case len(o.Engines) == 1:
		return o.Engines[0].PID
	case len(o.Engines) == 0 && o.PID > 0:
		prog, _, _ := strings.Cut(o.Cmdline, " ")
		if !slices.Contains(portForwarders, path.Base(prog)) {
			return o.PID
		}
	}
	return 0
}

// portForwarders hold a port for a process elsewhere (a container, a
// pod, another machine), whose zone is not theirs.
var portForwarders = []string{"docker-proxy", "rootlessport", "rootlesskit", "slirp4netns", "pasta", "kubectl", "ssh", "socat"}

// logZone is how in's zone-less stamps are read: in the zone of the
// engine's process when the log belongs to one endpoint on this machine
// and the host may be read, else as engine-local time of an unknown zone.
// A command that stamps its lines itself (docker, kubectl: RFC 3339 with
// a zone; journalctl: this machine's zone) and the simulator's log need
// no zone (nil).
func logZone(in logs.Input, env *session.Env) func() (*time.Location, bool) {
	if in.Reader != nil || in.Stamps != logs.StampsNone {
		return nil
	}
	if len(env.URLs) == 1 && !hostFlags.noHost {
		if l := newPortLook(env.URLs[0]); l != nil {
			z := &engineZone{proc: procfs.FS(), port: l.port}
			return z.zone
		}
	}
	return func() (*time.Location, bool) { return time.Local, false }
}
