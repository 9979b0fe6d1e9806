package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/llmtop/llmtop/session"
)

// The sources (engine scrapes, NVML, log tails…) plug in here, so the
// wiring of each lives beside its flags in a wire_<name>.go file and no
// face needs to know which sources exist: every face's session
// (package session) starts them all.
//
// A source delivers typed model messages (model.Scrape, model.GPUSnapshot,
// model.LogLine, model.Sample, model.Event…) through env.Send, which tees
// them into the recording and hands them to the core's one goroutine.

// sourcePlugin is one kind of source.
type sourcePlugin struct {
	Name string
	// Flags registers the source's flags on the root command.
	Flags func(fs *pflag.FlagSet)
	// Start starts the source's goroutines and returns quickly; they stop
	// when ctx is cancelled. An error is shown in the source's pane, it
	// does not stop the monitor.
	Start func(ctx context.Context, env *session.Env) error
	// On says whether the flags and env give the source anything to read
	// (nil: always). A source that is off is not listed on the screen's
	// sources line, where "ok" would claim a reading nobody took.
	On func(env *session.Env) bool
}

var sourcePlugins []sourcePlugin

// registerSource adds a source; wire_<name>.go files call it from init. Its
// flags become persistent root flags, so `llmtop --log f URL` and the
// subcommands that watch endpoints (snapshot, diagnose) share them.
func registerSource(p sourcePlugin) {
	sourcePlugins = append(sourcePlugins, p)
	if p.Flags != nil {
		p.Flags(root.PersistentFlags())
	}
}

// sourceStatuses is the screen's first source status line: "" (running,
// no error yet) for each plugin that is on for env.
func sourceStatuses(ps []sourcePlugin, env *session.Env) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		if p.On == nil || p.On(env) {
			out[p.Name] = ""
		}
	}
	return out
}

// sessionSources are the plugins as a session starts them.
func sessionSources(ps []sourcePlugin) []session.Source {
	out := make([]session.Source, 0, len(ps))
	for _, p := range ps {
		out = append(out, session.Source{Name: p.Name, Start: p.Start})
	}
	return out
}
