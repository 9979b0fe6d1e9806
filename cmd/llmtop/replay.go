package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
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
		return usageErr("--speed %v: want a speed above 0 and at most 10000", replayFlags.speed)
	}
	open := func() (*recording.Reader, error) { return recording.Open(path) }
	r, err := open()
	if err != nil {
		return err
	}
	h := r.Header()
	firstRec, err := r.Next()
	r.Close()
	if err == io.EOF {
		return noRecords(path)
	}
	if err != nil {
		return err
	}
	first := firstRec.Time
	from := first
	if replayFlags.from != "" {
		// the end is known once the index has read it: bounded below
		if from, err = parseAt(replayFlags.from, first, maxTime); err != nil {
			return err
		}
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
	rp, err := newReplayer(path, h, open, replayOptions{Speed: replayFlags.speed}, ctx.Done())
	if err != nil {
		return err
	}
	defer rp.close()
	if last, done, _, _ := rp.x.state(); replayFlags.from != "" && from.After(last) {
		if !done {
			fmt.Fprintf(os.Stderr, "llmtop: reading %s up to %s…\n", path, from.Local().Format("15:04:05"))
		}
	}
	start, err := rp.seekTo(from)
	if err != nil {
		return err
	}
	if last, done, _, _ := rp.x.state(); done && from.After(last) {
		_, err := parseAt(replayFlags.from, first, last) // says the recording's span
		return err
	}
	noColor := monitorFlags.noColor || cfg.NoColor || os.Getenv("NO_COLOR") != ""
	window := time.Duration(h.Window)
	// The session around the position's core: the screen's loop drives it
	// (Host), as in the monitor; the replayer is its one source, paced by
	// the recording's clock (a seek hands the screen a new core).
	var p *tea.Program
	sess := session.New(session.Options{Monitor: start.mon, Host: func(msg any) { p.Send(msg) }})
	defer sess.Close(quitWait)
	m := tui.New(tui.Options{
		Core: sess.Core(), Endpoints: h.Endpoints, Interval: time.Duration(h.Interval), Window: window,
		Simulated: h.Simulated, Now: from, Theme: cfg.Theme, NoColor: noColor, Keys: &cfg.Keys,
		Thresholds: &cfg.Thresholds, Save: saveSnapshot, Replay: rp.control, Panes: cfg.Panes, NoMouse: cfg.NoMouse,
	})
	// As in the monitor: the command's context ends the program on a
	// signal; Bubble Tea's own handler would race it.
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler()}
	p, runProgram := screenProgram(m, popts, screenIO{in: os.Stdin, out: os.Stdout, fd: os.Stdout}, noColor, cfg.NoMouse)
	go rp.run(ctx, start, sess.Send)
	err = runProgram()
	printNotes(os.Stderr, path, rp.x.notesNow())
	if err != nil && !(errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return err
	}
	return nil
}

// replayer paces a recording into the screen. It owns the position (a
// cursor on the index's segments); the screen owns the core it was
// handed.
type replayer struct {
	x     *replayIndex
	h     recording.Header
	speed float64
	ctl   chan tui.ReplayKey
	stop  <-chan struct{}
	first time.Time
}

// replayOptions: the speed, and how many records a segment of the index
// holds (0: segRecords; a test makes them short).
type replayOptions struct {
	Speed float64
	Every int
}

// newReplayer starts indexing the recording that open reads (path names
// it) and returns its replayer; close ends the index.
func newReplayer(path string, h recording.Header, open func() (*recording.Reader, error), o replayOptions, stop <-chan struct{}) (*replayer, error) {
	x, err := newReplayIndex(path, h, open, o.Every, stop)
	if err != nil {
		return nil, err
	}
	return &replayer{x: x, h: h, speed: o.Speed, ctl: make(chan tui.ReplayKey, 16), stop: stop}, nil
}

func (r *replayer) close() { r.x.Close() }

// control is the screen's hook: it never blocks (a key pressed while the
// replayer is busy rebuilding is dropped when 16 are waiting).
func (r *replayer) control(k tui.ReplayKey) {
	select {
	case r.ctl <- k:
	default:
	}
}

// position is a core with every record up to at fed in, the cursor on
// the records after it, and the demo's badge as it stood at at.
type position struct {
	mon      *core.Monitor
	at       time.Time
	cur      *cursor
	scenario *recording.Scenario
}

// seekTo builds the position at t from the nearest checkpoint at or
// before it (waiting for the index to reach t).
func (r *replayer) seekTo(t time.Time) (position, error) {
	seg, i, err := r.x.waitFor(t, r.stop)
	if err != nil {
		return position{}, err
	}
	if r.first.IsZero() {
		if s0, ok := r.x.segmentAt(0, r.stop); ok {
			r.first = s0.start
		}
	}
	mon, err := r.x.checkpoint(seg)
	if err != nil {
		return position{}, err
	}
	c := r.x.cursor(i, seg, r.stop)
	p := position{mon: mon, at: t, cur: c, scenario: seg.scenario}
	for {
		rec, ok := c.peek()
		if !ok || rec.Time.After(t) {
			break
		}
		session.Feed(mon, rec)
		if sc, ok := rec.Msg.(recording.Scenario); ok {
			p.scenario = &sc
		}
		c.pop()
	}
	return p, nil
}

// run plays from p (the screen's core already holds everything up to
// it) until ctx ends.
func (r *replayer) run(ctx context.Context, p position, send func(any)) {
	cur, at, paused := p.cur, p.at, false
	ended := func() bool { _, ok := cur.peek(); return !ok }
	state := func(tick bool, c *core.Monitor, note string) tui.ReplayMsg {
		m := tui.ReplayMsg{At: at, Speed: r.speed, Paused: paused, Ended: ended(), Tick: tick, Core: c, Note: note, Start: r.first}
		if last, done, _, _ := r.x.state(); done {
			m.End = last // the length is known once the index has read it all
		}
		return m
	}
	if p.scenario != nil {
		send(scenarioMsg(*p.scenario))
	}
	send(state(false, nil, "")) // the screen names its keys (the user's)
	indexed := make(chan error, 1)
	go func() {
		_, _, _, _ = r.x.waitDone(ctx.Done())
		_, _, err, _ := r.x.state()
		indexed <- err
	}()

	// deliver sends the records of one recorded moment.
	deliver := func() {
		rec, _ := cur.peek()
		t := rec.Time
		at = t
		send(state(false, nil, ""))
		for {
			rec, ok := cur.peek()
			if !ok || rec.Time.After(t) {
				break
			}
			cur.pop()
			switch m := rec.Msg.(type) {
			case recording.Tick:
				send(state(true, nil, ""))
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
		if t.Before(r.first) {
			t = r.first
		}
		if last, done, _, _ := r.x.state(); done && t.After(last) {
			t = last
		}
		np, err := r.seekTo(t)
		if err != nil {
			send(state(false, nil, "seek: "+err.Error()))
			return
		}
		if last, done, _, _ := r.x.state(); done && t.After(last) {
			t = last
		}
		cur, at = np.cur, t
		if np.scenario != nil {
			send(scenarioMsg(*np.scenario))
		}
		send(state(false, np.mon, note))
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var wake <-chan time.Time
		if !paused {
			if rec, ok := cur.peek(); ok {
				timer.Reset(max(0, time.Duration(float64(rec.Time.Sub(at))/r.speed)))
				wake = timer.C
			}
		}
		select {
		case <-ctx.Done():
			return
		case err := <-indexed:
			indexed = nil
			note := "" // the header learns the recording's length
			if err != nil {
				note = "the recording ends in an error: " + err.Error()
			}
			send(state(false, nil, note))
		case <-wake:
			deliver()
			if ended() {
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
				for end := at.Add(time.Second); ; {
					rec, ok := cur.peek()
					if !ok || rec.Time.After(end) {
						break
					}
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
				seek(r.first, "")
			case tui.ReplayFaster, tui.ReplaySlower:
				f := 2.0
				if k == tui.ReplaySlower {
					f = 0.5
				}
				r.speed = min(max(r.speed*f, 0.25), 10000)
				send(state(false, nil, ""))
			case tui.ReplayNext:
				_, done, _, marks := r.x.state()
				if !done {
					send(state(false, nil, "still reading the recording for its findings; try again in a moment"))
					break
				}
				j := sort.Search(len(marks), func(j int) bool { return marks[j].After(at) })
				if j == len(marks) {
					send(state(false, nil, "no finding opens and no engine restarts after this moment"))
					break
				}
				seek(marks[j], "")
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
