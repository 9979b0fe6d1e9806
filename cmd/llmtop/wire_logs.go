package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/logs"
)

// The log source: follows engine logs (files, commands, the demo's
// simulator) and delivers model.LogLine — with Event set when a known
// message matched — and log-derived model.Sample from stats lines.

var logFlags struct {
	files    []string
	commands []string
	docker   []string
	journal  []string
	kube     []string
}

func init() {
	registerSource(sourcePlugin{
		Name: "logs",
		Flags: func(fs *pflag.FlagSet) {
			fs.StringArrayVar(&logFlags.files, "log", nil, "follow this engine log file like tail -F (survives rotation and truncation; may not exist yet)")
			fs.StringArrayVar(&logFlags.commands, "log-cmd", nil, "follow a command's output, e.g. 'ssh gpu1 tail -F /var/log/vllm.log' (restarted with backoff when it exits)")
			fs.StringArrayVar(&logFlags.docker, "docker", nil, "follow a container's log: docker logs -f --timestamps --tail 200 NAME (the 200 lines are shown as history)")
			fs.StringArrayVar(&logFlags.journal, "journal", nil, "follow a systemd unit's log: journalctl -fu UNIT -n 200 (the 200 lines are shown as history)")
			fs.StringArrayVar(&logFlags.kube, "kube", nil, "follow a pod's log: kubectl logs -f --timestamps --tail 200 TARGET (e.g. deploy/vllm, -n ns pod/x; the 200 lines are shown as history)")
		},
		Start: startLogs,
		On:    func(env *session.Env) bool { return env.SimLog != nil || len(logInputs(env.Logs)) > 0 },
	})
}

// logInputs turns the flags, and the files a face attaches (extra), into
// the inputs to follow.
func logInputs(extra []string) []logs.Input {
	var in []logs.Input
	for _, f := range logFlags.files {
		in = append(in, logs.Input{File: f})
	}
	for _, f := range extra {
		// the engine llmtop launched writes it: its first lines are
		// this run's start, not history
		in = append(in, logs.Input{File: f, Launched: true})
	}
	for _, c := range logFlags.commands {
		in = append(in, logs.Input{Command: c})
	}
	for _, n := range logFlags.docker {
		// --timestamps: each line's time, which tells the 200 lines of
		// history from what happens now (cut before the line is shown)
		in = append(in, logs.Input{Command: "docker logs -f --timestamps --tail 200 " + shellQuote(n), Stamps: logs.StampsPrefix})
	}
	for _, u := range logFlags.journal {
		in = append(in, logs.Input{Command: "journalctl -fu " + shellQuote(u) + " -n 200", Stamps: logs.StampsLocal})
	}
	for _, t := range logFlags.kube {
		// kubectl targets may carry their own flags ("-n ns deploy/x"),
		// so words are quoted one by one.
		words := strings.Fields(t)
		for i, w := range words {
			words[i] = shellQuote(w)
		}
		in = append(in, logs.Input{Command: "kubectl logs -f --timestamps --tail 200 " + strings.Join(words, " "), Stamps: logs.StampsPrefix})
	}
	return in
}

// logsAttached reports whether a log is attached from the start: a command's,
// or a --log file that exists. A file not there yet counts once a line
// comes (the core sees it): a missing path is never "engine log free of
// OOM".
func logsAttached(extra []string) bool {
	for _, in := range logInputs(extra) {
		if in.File == "" {
			return true
		}
		if _, err := os.Stat(in.File); err == nil {
			return true
		}
	}
	return false
}

// checkLogFlags refuses what no log can be followed from (an empty value,
// a --log that is a directory, a device, …): the monitor and diagnose
// check the same, before they start.
func checkLogFlags() error {
	for _, list := range [][]string{logFlags.files, logFlags.commands, logFlags.docker, logFlags.journal, logFlags.kube} {
		for _, v := range list {
			if strings.TrimSpace(v) == "" {
				return usageErr("an empty --log/--log-cmd/--docker/--journal/--kube value: give a file, command or name")
			}
		}
	}
	for _, f := range logFlags.files {
		if err := logs.CheckFile(f); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("--log %w", err)}
		}
	}
	return nil
}

func startLogs(ctx context.Context, env *session.Env) error {
	if err := checkLogFlags(); err != nil {
		return err
	}
	inputs := logInputs(env.Logs)
	if env.SimLog != nil {
		inputs = append(inputs, logs.Input{Reader: env.SimLog, Name: "simulator log"})
	}
	if len(inputs) == 0 {
		return nil
	}
	// A log belongs to the endpoint when there is only one; with several
	// endpoints its lines and samples carry no endpoint.
	endpoint := ""
	if len(env.URLs) == 1 {
		endpoint = model.RedactURL(env.URLs[0]) // the monitor's ID for it
	}
	// A file is read once a second on the beat grid, in the wake-up of the
	// scrape (a tail needs no more: the screen draws the log's lines with
	// its next frame), not whenever inotify says it changed.
	for _, in := range inputs {
		env.Stopped = append(env.Stopped, logs.Start(ctx, in, logs.Options{Endpoint: endpoint, Beat: time.Second, Zone: logZone(in, env)}, env.Send))
	}
	return nil
}

// quitWait bounds how long llmtop waits, when it quits, for its log
// commands to be gone: they get SIGTERM at once and SIGKILL 2 s later.
const quitWait = 3 * time.Second

// shellQuote quotes s for /bin/sh so a name cannot inject commands.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
