package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/launch"
	"github.com/llmtop/llmtop/tui"
)

// `llmtop run -- ENGINE ARGS…`: llmtop starts the engine itself (its own
// session, its output to a log llmtop follows), watches it, and can apply
// a finding's change to it on a key (A): the one place llmtop restarts an
// engine, and only the one it launched.

var runFlags struct {
	onQuit    string
	grace     time.Duration
	engineLog string
	url       string
}

func init() {
	cmd := &cobra.Command{
		Use:   "run [flags] -- ENGINE COMMAND…",
		Short: "Start an engine and watch it; apply a finding's flag change on a key (A) and compare before → after at the same load",
		Long: `Start an inference engine with its output going to a log file that llmtop
follows, find its endpoint from the command line, wait for it through its
start-up and watch it as usual. Press A to apply a finding's flag change: llmtop
shows the exact diff, asks, restarts the engine (SIGTERM, a drain of up to
--stop-timeout, then SIGKILL), runs the same benchmark on the new run and shows
before → after at the same load (r: the runs view). U undoes it.

The engine runs in its own session: Ctrl+C reaches llmtop, never the engine.
On q llmtop asks whether to stop the engine or leave it running (--on-quit
decides without asking); a closed terminal leaves it running. Either way
llmtop prints its pid, command line and log, and writes them beside the log
(LOG.pid).`,
		Example: `  llmtop run -- vllm serve meta-llama/Llama-3.1-8B-Instruct ` + vllmCap("32") + `
  llmtop run -- ` + llamaServe("2") + `
  llmtop run --on-quit stop -- llmtop sim --scenario queue-buildup ` + vllmCap("16"),
		Args: cobra.MinimumNArgs(1),
		RunE: runRun,
	}
	fs := cmd.Flags()
	fs.SetInterspersed(false) // the engine's own flags are its, with or without --
	fs.StringVar(&runFlags.onQuit, "on-quit", "ask", "what q does with the engine: ask, stop or leave (a lost terminal always leaves it)")
	fs.DurationVar(&runFlags.grace, "stop-timeout", 30*time.Second, "how long a stop waits for the engine to drain after SIGTERM before SIGKILL")
	fs.StringVar(&runFlags.engineLog, "engine-log", "", "the engine's log file (default $XDG_STATE_HOME/llmtop/run/ENGINE-TIME.log)")
	fs.StringVar(&runFlags.url, "url", "", "the engine's endpoint when llmtop cannot read it from the command line (on this machine only)")
	addRecordFlag(fs)
	root.AddCommand(cmd)
	tui.RegisterOverlay(tui.OverlaySpec{ID: "apply", Key: tui.DefaultKeyMap().Apply,
		New: func() tui.Overlay { return tui.NewApplyOverlay(&runLauncher{}, benchRunner{newMonitorRuntime()}) }})
}

func runRun(cmd *cobra.Command, args []string) error {
	switch runFlags.onQuit {
	case "ask", "stop", "leave":
	default:
		return fmt.Errorf("--on-quit %q: want ask, stop or leave", runFlags.onQuit)
	}
	if runFlags.grace <= 0 {
		return fmt.Errorf("--stop-timeout %s: want a positive duration such as 30s", runFlags.grace)
	}
	env, argv := splitEnv(args)
	if len(argv) == 0 {
		return errors.New("no engine command after the environment: llmtop run -- [NAME=VALUE…] ENGINE ARGS…")
	}
	logPath := runFlags.engineLog
	if logPath == "" {
		dir, err := runDir()
		if err != nil {
			return err
		}
		logPath = filepath.Join(dir, filepath.Base(argv[0])+"-"+time.Now().Format("20060102-150405")+".log")
	}
	s, err := launch.NewSession(argv, env, logPath, runFlags.url, runFlags.grace)
	if err != nil {
		return err
	}
	// the engine llmtop run started, for this monitor's apply screen
	launched := &runLauncher{}
	launched.set(s)
	defer launched.set(nil)
	p := s.Current()
	fmt.Fprintf(os.Stderr, "llmtop run: started pid %d, its log %s\n", p.PID, p.Log)
	// The monitor follows the engine's log from its first line.
	var lost atomic.Bool
	err = runMonitor(cmd.Context(), monitorOptions{URLs: []string{s.URL}, Lost: &lost, Started: launched.attach,
		Logs: []string{logPath}, Launcher: launched})
	launched.detach()
	ended := lost.Load() || cmd.Context().Err() != nil
	choice := runFlags.onQuit
	if choice == "ask" {
		choice = "leave"
		if !ended {
			choice = askStop(cmd.Context(), os.Stdin, os.Stderr, s.Current())
		}
	}
	finish(os.Stderr, s, choice == "stop")
	return err
}

// splitEnv takes NAME=VALUE words before the program (as env(1) does):
// `llmtop run -- OLLAMA_NUM_PARALLEL=4 ollama serve`.
func splitEnv(args []string) (env, argv []string) {
	for i, a := range args {
		if k, _, ok := strings.Cut(a, "="); ok && k != "" && !strings.ContainsAny(k, "/-.") {
			env = append(env, a)
			continue
		}
		return env, args[i:]
	}
	return env, nil
}

// runDir is $XDG_STATE_HOME/llmtop/run (~/.local/state when unset).
func runDir() (string, error) {
	d, err := benchDir()
	if err != nil {
		return "", errors.New("no $XDG_STATE_HOME nor home directory for the engine's log: give --engine-log")
	}
	return filepath.Join(filepath.Dir(d), "run"), nil
}

// askStop asks, after the screen has closed, whether to stop the engine.
// No answer (no terminal, end of input, a signal) leaves it running.
func askStop(ctx context.Context, in io.Reader, out io.Writer, p *launch.Proc) string {
	if done, _ := p.Exited(); done {
		return "leave"
	}
	fmt.Fprintf(out, "llmtop: the engine (pid %d) is still running. [s]top it or [l]eave it running? [l] ", p.PID)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(in).ReadString('\n')
		answer <- strings.ToLower(strings.TrimSpace(line))
	}()
	select {
	case a := <-answer:
		if strings.HasPrefix(a, "s") || strings.HasPrefix(a, "y") {
			return "stop"
		}
	case <-ctx.Done():
		fmt.Fprintln(out)
	}
	return "leave"
}

// finish stops the engine or leaves it, and says where it is either way.
func finish(out io.Writer, s *launch.Session, stop bool) {
	p := s.Current()
	if done, how := p.Exited(); done {
		fmt.Fprintf(out, "llmtop: the engine (pid %d) %s; its log: %s\n", p.PID, how, p.Log)
		return
	}
	if stop {
		fmt.Fprintf(out, "llmtop: stopping the engine (pid %d): SIGTERM, SIGKILL after %s…\n", p.PID, s.Grace)
		st := p.Stop(s.Grace)
		fmt.Fprintf(out, "llmtop: the engine %s; its log: %s\n", st, p.Log)
		return
	}
	_ = p.WriteNote()
	fmt.Fprintf(out, "llmtop: left the engine running (pid %d); this is also in %s\n%s", p.PID, p.NotePath(), p.Note())
}

// runLauncher is tui.Launcher over the launched engine: it plans and
// restarts, tells the core about each start (model.Launch), and reports an
// engine that exits by itself.
type runLauncher struct {
	mu       sync.Mutex
	s        *launch.Session
	send     func(any)
	stopping bool // a restart is stopping the engine: its exit is expected
}

func (l *runLauncher) set(s *launch.Session) {
	l.mu.Lock()
	l.s = s
	l.mu.Unlock()
}

func (l *runLauncher) session() *launch.Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s
}

// attach is called once the monitor runs, with its send.
func (l *runLauncher) attach(send func(any)) {
	l.mu.Lock()
	l.send = send
	s := l.s
	l.mu.Unlock()
	if s != nil {
		p := s.Current()
		// The first start, told to the core: the endpoint is starting
		// (its refused scrapes are not an outage) and its first run
		// carries the exact command line.
		// Not from here: attach runs before the screen's loop, which
		// send waits for.
		go send(launchOf(s.URL, p, p.Started, ""))
		l.watch(p, "")
	}
}

// tell hands the core a word of llmtop's (re)start, while the monitor runs.
func (l *runLauncher) tell(x model.Launch) {
	l.mu.Lock()
	send := l.send
	l.mu.Unlock()
	if send != nil {
		send(x)
	}
}

func (l *runLauncher) detach() {
	l.mu.Lock()
	l.send = nil
	l.mu.Unlock()
}

// watch reports p's exit unless llmtop stopped it.
func (l *runLauncher) watch(p *launch.Proc, applied string) {
	go func() {
		<-p.Done()
		l.mu.Lock()
		send, stopping, s := l.send, l.stopping, l.s
		l.mu.Unlock()
		if send == nil || stopping || s == nil || s.Current() != p {
			return
		}
		_, how := p.Exited()
		title := fmt.Sprintf("the engine llmtop launched (pid %d) %s; its log: %s", p.PID, how, p.Log)
		if applied != "" {
			title = fmt.Sprintf("the engine %s after the change llmtop applied (%s): A then U undoes it; its log: %s", how, applied, p.Log)
		}
		send(model.Event{Time: time.Now(), Endpoint: s.URL, Source: "llmtop run", Kind: "launched_exit", Severity: model.SevCrit,
			Category: "availability", Title: title})
		send(tui.LaunchExitedMsg{PID: p.PID, How: how, Log: p.Log, Applied: applied})
	}()
}

func (l *runLauncher) Active() bool { return l.session() != nil }

func (l *runLauncher) URL() string {
	if s := l.session(); s != nil {
		return s.URL
	}
	return ""
}

func (l *runLauncher) Info() string {
	s := l.session()
	if s == nil {
		return ""
	}
	p := s.Current()
	return fmt.Sprintf("launched by llmtop: pid %d · %s · log %s", p.PID, model.RedactCmdline(launch.QuoteCommand(p.Env, p.Args)), p.Log)
}

func (l *runLauncher) Plan(finding string, changes []string) tui.LaunchPlan {
	s := l.session()
	if s == nil {
		return tui.LaunchPlan{}
	}
	return toTUI(s.PlanFor(finding, changes), s.Grace)
}

func (l *runLauncher) PlanUndo() (tui.LaunchPlan, bool) {
	s := l.session()
	if s == nil {
		return tui.LaunchPlan{}, false
	}
	p, ok := s.PlanUndo()
	return toTUI(p, s.Grace), ok
}

func toTUI(p launch.Plan, grace time.Duration) tui.LaunchPlan {
	out := tui.LaunchPlan{Finding: p.Finding, Change: p.Change, Diff: p.Diff, Grace: grace, Undo: p.Undo, OK: p.OK(), Ref: p,
		Old: model.RedactCmdline(p.OldCommand()), New: model.RedactCmdline(p.NewCommand())}
	for _, na := range p.NotApplied {
		out.NotApplied = append(out.NotApplied, na.Change+": "+na.Why)
	}
	if p.OK() {
		out.Mark = p.Mark()
	}
	return out
}

func (l *runLauncher) Restart(tp tui.LaunchPlan, progress func(string)) error {
	s := l.session()
	p, ok := tp.Ref.(launch.Plan)
	if s == nil || !ok {
		return errors.New("no engine launched by llmtop to restart")
	}
	if err := s.CanRestart(p); err != nil {
		return err // nothing stopped: the engine serves on
	}
	l.mu.Lock()
	l.stopping = true
	l.mu.Unlock()
	np, err := restartTelling(s, s.URL, p, l.tell, progress)
	l.mu.Lock()
	l.stopping = false
	l.mu.Unlock()
	if err != nil {
		return err
	}
	l.watch(np, p.Mark())
	return nil
}

// llamaServe is a llama-server command line with n slots and its metrics
// on, for the usage examples (engines/llamacpp.go spells the flags).
func llamaServe(n string) string {
	first := func(s string) string { f, _, _ := strings.Cut(s, " "); return f }
	l := engines.LlamaCpp.Levers
	return "llama-server -m model.gguf " + first(l.Cap) + " " + n + " " + first(l.EnableMetrics.Change)
}

// vllmCap is vLLM's concurrency cap with a value, for the usage examples
// (the flag alone when v is empty): engines/vllm.go spells it.
func vllmCap(v string) string {
	if v == "" {
		f, _, _ := strings.Cut(engines.VLLM.Levers.Cap, " ")
		return f
	}
	return engines.Fill(engines.VLLM.Levers.Cap, v)
}
