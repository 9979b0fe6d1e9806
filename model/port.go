package model

import "time"

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
