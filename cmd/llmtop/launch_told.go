package main

import (
	"fmt"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/launch"
)

// launchOf is the core's word that llmtop started p at url at time at
// (applied: the change the start carries, "" for the first start).
func launchOf(url string, p *launch.Proc, at time.Time, applied string) model.Launch {
	return model.Launch{Endpoint: url, Time: at, PID: p.PID, Cmdline: model.RedactCmdline(launch.QuoteCommand(p.Env, p.Args)), Log: p.Log, Applied: applied}
}

// restartTelling carries out p on s's engine (llmtop run's restart from
// the screen, tune's steps and reverts) and tells the core at url through
// tell as it goes: before the engine is stopped (Restarting: its drain and
// the new start are this restart, not an outage), then the new process,
// or that none started (Failed). The caller has checked s.CanRestart(p):
// nothing is said of a plan that stops nothing.
func restartTelling(s *launch.Session, url string, p launch.Plan, tell func(model.Launch), progress func(string)) (*launch.Proc, error) {
	stoppedAt := time.Now()
	old := launchOf(url, s.Current(), stoppedAt, p.Mark())
	old.Restarting = true
	tell(old)
	np, _, err := s.Restart(p, progress)
	if err != nil {
		tell(model.Launch{Endpoint: url, Time: time.Now(), Applied: p.Mark(), Failed: err.Error()})
		return nil, fmt.Errorf("llmtop stopped the engine to restart it (%s) and could not start it again: %w", p.Mark(), err)
	}
	tell(launchOf(url, np, stoppedAt, p.Mark()))
	return np, nil
}
