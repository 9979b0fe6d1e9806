package model

import (
	"fmt"
	"time"
)

// PortOwner is what this machine's /proc says about a local endpoint's port
// while nothing answers there: who holds it, and whether an engine process
// is alive. Sources send it; the core shows it in the lifecycle.
type PortOwner struct {
	Endpoint string
	Time     time.Time
	Port     int
	// PID is the process listening on the port (0: nothing listens, or
	// the holder is in another PID namespace); Cmdline its command line.
	PID     int
	Cmdline string
	// Stopped: the holder is stopped (SIGSTOP, a debugger): the kernel
	// accepts connections on its port and nothing answers them.
	Stopped bool
	// Started is when the process holding the port started (zero when
	// unknown): an engine's uptime where its metrics do not say
	// (llama-server has no process_start_time_seconds).
	Started time.Time
	// Engines are processes that look like an inference engine (the
	// holder included), with their command lines and ages.
	Engines []Process
	// Note is a caveat: a container's PID namespace hides the host's
	// processes, /proc unreadable…
	Note string
}

// Process is one local process.
type Process struct {
	PID     int
	Cmdline string
	Age     time.Duration
}

// Describe says it in one line: "port 8000: held by PID 4711 python3 -m
// vllm…" or "nothing listens on 8000; engine process alive: PID 4711 …, up
// 38s" or "nothing listens on 8000; no engine process found".
func (p PortOwner) Describe() string {
	var s string
	switch {
	case p.PID > 0 && p.Stopped:
		s = fmt.Sprintf("port %d: held by PID %d, which is stopped (SIGSTOP or a debugger: kill -CONT %d resumes it) %s", p.Port, p.PID, p.PID, p.Cmdline)
	case p.PID > 0:
		s = fmt.Sprintf("port %d: held by PID %d %s", p.Port, p.PID, p.Cmdline)
	default:
		s = fmt.Sprintf("nothing listens on %d", p.Port)
	}
	switch {
	case len(p.Engines) > 0 && p.PID == 0:
		x := p.Engines[0]
		s += fmt.Sprintf("; engine process alive: PID %d %s, up %s", x.PID, x.Cmdline, x.Age.Round(time.Second))
	case len(p.Engines) == 0:
		s += "; no engine process found"
	}
	if p.Note != "" {
		s += " (" + p.Note + ")"
	}
	return s
}
