package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/tui"
)

// `llmtop replay FILE`: the monitor on a recording. A replayer goroutine
// sends the recorded messages paced by their times (×speed); a seek builds
// a fresh core from the start up to the target, unpaced, and hands it to
// the screen.

var replayFlags struct {
	speed float64
	from  string
}

func init() {
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Open the monitor on a recording (from --record): every pane, the diagnosis and the runs as they were",
		Long: `Replay a recording made with --record in the monitor, paced by its clock
(--speed 10 plays ten times faster), from its start or from --from.

` + tui.ReplayHelp(tui.DefaultKeyMap()) + `
(the defaults: the config's [keys] rebinds them as replay_step, replay_back,
replay_forward, replay_back_far, replay_forward_far, replay_next, replay_start,
pause, slower and faster; the replay's help line and ? show the keys in use)

--from takes a clock time (14:02 or 14:02:11), an RFC 3339 time or an offset
from the start (+10m).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmdContext(cmd), args[0])
		},
	}
	fs := cmd.Flags()
	fs.Float64Var(&replayFlags.speed, "speed", 1, "playback speed: 10 plays ten recorded seconds a second")
	fs.StringVar(&replayFlags.from, "from", "", "start at this moment of the recording")
	root.AddCommand(cmd)
}

func runReplay(ctx context.Context, path string) error {
	if replayFlags.speed <= 0 || replayFlags.speed > 10000 {
		return fmt.Errorf("--speed %v: want a speed above 0 and at most 10000", replayFlags.speed)
	}
	h, recs, _, err := readRecording(path, os.Stderr)
	if err != nil {
		return err
	}
	from, err := parseAt(replayFlags.from, recs[0].Time, lastTime(recs))
	if err != nil {
		return err
	}
	if replayFlags.from == "" {
		from = recs[0].Time
	}
	if !term.IsTerminal(os.Stdout.Fd()) {
		return errors.New("replay needs a terminal on stdout: for scripts use `llmtop diagnose --from FILE --json` or `llmtop snapshot --from FILE --at TIME --json`")
	}
	cfg, err := loadConfig(monitorFlags.config)
	if err != nil {
		return err
	}
	for _, c := range cfg.Keys.Clashes() {
		if c.Replay { // one of the two would never be reached there
			return fmt.Errorf("config [keys]: %v: rebind one of them", c)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rp := newReplayer(h, recs, replayFlags.speed)
	noColor := monitorFlags.noColor || cfg.NoColor || os.Getenv("NO_COLOR") != ""
	window := time.Duration(h.Window)
	m := tui.New(tui.Options{
		Core: rp.build(from), Endpoints: h.Endpoints, Interval: time.Duration(h.Interval), Window: window,
		Simulated: h.Simulated, Now: from, Theme: cfg.Theme, NoColor: noColor, Keys: &cfg.Keys,
		Thresholds: &cfg.Thresholds, Save: saveSnapshot, Replay: rp.control, Panes: cfg.Panes, NoMouse: cfg.NoMouse,
	})
	// As in the monitor: the command's context ends the program on a
	// signal; Bubble Tea's own handler would race it.
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler()}
	p, runProgram := screenProgram(m, popts, screenIO{in: os.Stdin, out: os.Stdout, fd: os.Stdout}, noColor, cfg.NoMouse)
	go rp.run(ctx, from, func(msg any) { p.Send(msg) })
	err = runProgram()
	if err != nil && !(errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return err
	}
	return nil
}

// replayer paces a recording into the screen. It owns the position; the
// screen owns the core it was handed.
type replayer struct {
	h     recording.Header
	recs  []recording.Record
	speed float64
	ctl   chan tui.ReplayKey
	// marks are the moments a finding opened or an engine run started,
	// for the next-finding key; found by a first pass at start.
	marks []time.Time
}

func newReplayer(h recording.Header, recs []recording.Record, speed float64) *replayer {
	// The file's order is the order the core took them; a stamp a few µs
	// behind the one before (two sources racing to the recorder) is
	// clamped, so the clock only moves forward and seeks can bisect.
	for i := 1; i < len(recs); i++ {
		if recs[i].Time.Before(recs[i-1].Time) {
			recs[i].Time = recs[i-1].Time
		}
	}
	return &replayer{h: h, recs: recs, speed: speed, ctl: make(chan tui.ReplayKey, 16)}
}

// control is the screen's hook: it never blocks (a key pressed while the
// replayer is busy rebuilding is dropped when 16 are waiting).
func (r *replayer) control(k tui.ReplayKey) {
	select {
	case r.ctl <- k:
	default:
	}
}

// build is a fresh core with every record up to t fed in, as the monitor
// took them.
func (r *replayer) build(t time.Time) *core.Monitor {
	mon := monitorCore(r.h)
	for _, rec := range r.recs {
		if rec.Time.After(t) {
			break
		}
		feedMonitor(mon, rec)
	}
	return mon
}

// findMarks replays the whole recording once, unpaced.
func (r *replayer) findMarks() []time.Time {
	mon := monitorCore(r.h)
	for _, rec := range r.recs {
		feedMonitor(mon, rec)
	}
	seen := map[time.Time]bool{}
	for _, f := range mon.History() {
		seen[f.Opened] = true
	}
	for _, u := range mon.URLs() {
		for i, run := range mon.RunsOf(u) {
			if i > 0 {
				seen[run.Started] = true
			}
		}
	}
	var out []time.Time
	for t := range seen {
		if !t.IsZero() {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// after is the index of the first record later than t.
func (r *replayer) after(t time.Time) int {
	return sort.Search(len(r.recs), func(i int) bool { return r.recs[i].Time.After(t) })
}

// scenarioAt is the demo's badge as it stood at t.
func (r *replayer) scenarioAt(t time.Time) (recording.Scenario, bool) {
	for i := r.after(t) - 1; i >= 0; i-- {
		if sc, ok := r.recs[i].Msg.(recording.Scenario); ok {
			return sc, true
		}
	}
	return recording.Scenario{}, false
}

// run plays from `from` (the screen's core already holds everything up to
// it) until ctx ends.
func (r *replayer) run(ctx context.Context, from time.Time, send func(any)) {
	first, last := r.recs[0].Time, r.recs[len(r.recs)-1].Time
	i, at, paused := r.after(from), from, false
	state := func(tick bool, c *core.Monitor, note string) tui.ReplayMsg {
		return tui.ReplayMsg{At: at, Speed: r.speed, Paused: paused, Ended: i >= len(r.recs), Tick: tick, Core: c, Note: note}
	}
	if sc, ok := r.scenarioAt(at); ok {
		send(scenarioMsg(sc))
	}
	send(state(false, nil, "")) // the screen names its keys (the user's)
	marksDone := make(chan []time.Time, 1)
	go func() { marksDone <- r.findMarks() }()

	// deliver sends the records of one recorded moment.
	deliver := func() {
		t := r.recs[i].Time
		at = t
		send(state(false, nil, ""))
		for ; i < len(r.recs) && !r.recs[i].Time.After(t); i++ {
			switch m := r.recs[i].Msg.(type) {
			case recording.Tick:
				send(state(true, nil, ""))
			case recording.Bench:
				send(tui.ReplayBenchMsg{Bench: m.Bench, Run: m.Run})
			case recording.Scenario:
				send(scenarioMsg(m))
			case recording.Note:
				send(state(false, nil, "recorded: "+m.Text))
			default:
				send(m)
			}
		}
	}
	seek := func(t time.Time, note string) {
		if t.Before(first) {
			t = first
		}
		if t.After(last) {
			t = last
		}
		c := r.build(t)
		i, at = r.after(t), t
		if sc, ok := r.scenarioAt(t); ok {
			send(scenarioMsg(sc))
		}
		send(state(false, c, note))
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var wake <-chan time.Time
		if !paused && i < len(r.recs) {
			timer.Reset(max(0, time.Duration(float64(r.recs[i].Time.Sub(at))/r.speed)))
			wake = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case m := <-marksDone:
			r.marks = m
			marksDone = nil
		case <-wake:
			deliver()
			if i >= len(r.recs) {
				paused = true
				send(state(false, nil, "")) // the screen says how to go back
			}
		case k := <-r.ctl:
			switch k {
			case tui.ReplayPause:
				paused = !paused
				send(state(false, nil, ""))
			case tui.ReplayStep:
				paused = true
				for end := at.Add(time.Second); i < len(r.recs) && !r.recs[i].Time.After(end); {
					deliver()
				}
				send(state(false, nil, ""))
			case tui.ReplayBack1m:
				seek(at.Add(-time.Minute), "")
			case tui.ReplayFwd1m:
				seek(at.Add(time.Minute), "")
			case tui.ReplayBack10m:
				seek(at.Add(-10*time.Minute), "")
			case tui.ReplayFwd10m:
				seek(at.Add(10*time.Minute), "")
			case tui.ReplayStart:
				seek(first, "")
			case tui.ReplayFaster, tui.ReplaySlower:
				f := 2.0
				if k == tui.ReplaySlower {
					f = 0.5
				}
				r.speed = min(max(r.speed*f, 0.25), 10000)
				send(state(false, nil, ""))
			case tui.ReplayNext:
				if r.marks == nil && marksDone != nil {
					send(state(false, nil, "still reading the recording for its findings; try again in a moment"))
					break
				}
				j := sort.Search(len(r.marks), func(j int) bool { return r.marks[j].After(at) })
				if j == len(r.marks) {
					send(state(false, nil, "no finding opens and no engine restarts after this moment"))
					break
				}
				seek(r.marks[j], "")
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

func scenarioMsg(sc recording.Scenario) tui.ScenarioMsg {
	return tui.ScenarioMsg{Name: sc.Name, Elapsed: sc.Elapsed, Length: sc.Length}
}
