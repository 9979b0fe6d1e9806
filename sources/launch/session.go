package launch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Session is the engine llmtop launched, across the restarts it applied:
// the running process, the command lines before it (for undo), and where
// it answers. Its methods are safe from any goroutine.
type Session struct {
	URL    string
	Engine model.Engine
	Log    string
	// Grace is how long a restart waits for the engine to drain on SIGTERM
	// before SIGKILL.
	Grace time.Duration

	mu      sync.Mutex
	cur     *Proc
	history []launchLine // earlier launches, oldest first
	marks   []string     // the applied change behind each history step
}

// launchLine is one launch: the environment llmtop adds and the command.
type launchLine struct{ env, args []string }

// NewSession starts args (env added) with its output appended to log. url
// overrides the endpoint read from the command line; it must be on this
// machine: llmtop never restarts a remote engine.
func NewSession(args, env []string, log, url string, grace time.Duration) (*Session, error) {
	u, eng, err := Endpoint(args, env)
	if url != "" {
		u, err = strings.TrimRight(url, "/"), nil
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
	}
	if err != nil {
		return nil, err
	}
	if !model.IsLoopback(u) {
		return nil, fmt.Errorf("%s is not on this machine's loopback: llmtop run watches and restarts only the engine it starts here (bind it to 127.0.0.1 or 0.0.0.0)", model.RedactURL(u))
	}
	if answers(u) {
		return nil, fmt.Errorf("something already answers at %s: llmtop would watch it instead of the engine it starts; stop it or give the engine another --port", model.RedactURL(u))
	}
	p, err := Start(args, env, log)
	if err != nil {
		return nil, err
	}
	s := &Session{URL: u, Engine: eng, Log: log, Grace: grace, cur: p}
	_ = p.WriteNote()
	return s, nil
}

// answers reports whether an HTTP server answers at u now.
func answers(u string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(u + "/")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// Current is the running engine process.
func (s *Session) Current() *Proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Args is the current command line.
func (s *Session) Args() []string { return slices.Clone(s.Current().Args) }

// Env is the environment llmtop adds to the current engine's (NAME=VALUE).
func (s *Session) Env() []string { return slices.Clone(s.Current().Env) }

// Command is the current launch as a shell would read it back.
func (s *Session) Command() string {
	p := s.Current()
	return QuoteCommand(p.Env, p.Args)
}

// Plan is an action turned into a restart: the command line before and
// after, and the diff; or, when none of the finding's actions is a change
// of this command line, why each is not.
type Plan struct {
	Finding  string // the finding's id (or "undo")
	Change   string // the action's change as the finding words it
	Old, New []string
	// OldEnv and NewEnv are the environment llmtop adds, before and after.
	OldEnv, NewEnv []string
	Diff           []string
	NotApplied     []NotApplicable
	Undo           bool
}

// OK reports whether the plan restarts the engine.
func (p Plan) OK() bool { return p.New != nil }

// OldCommand and NewCommand are the launches before and after, as a shell
// would read them back.
func (p Plan) OldCommand() string { return QuoteCommand(p.OldEnv, p.Old) }

// NewCommand is the launch after the plan.
func (p Plan) NewCommand() string { return QuoteCommand(p.NewEnv, p.New) }

// Mark is what the run the plan starts is marked with.
func (p Plan) Mark() string {
	if p.Undo {
		return "undo: " + Describe(p.Diff)
	}
	return "applied: " + p.Finding + " → " + Describe(p.Diff)
}

// PlanFor tries a finding's actions in order and plans the first that is a
// change of the current command line; the ones before it are listed with
// why they are not.
func (s *Session) PlanFor(finding string, changes []string) Plan {
	cur, env := s.Args(), s.Env()
	p := Plan{Finding: finding, Old: cur, OldEnv: env}
	for _, text := range changes {
		c, err := ParseChange(text)
		var next, nextEnv, diff []string
		if err == nil {
			nextEnv, next, diff, err = ApplyEnv(env, cur, c, os.LookupEnv)
		}
		var na *NotApplicable
		if errors.As(err, &na) {
			p.NotApplied = append(p.NotApplied, *na)
			continue
		}
		if err != nil {
			p.NotApplied = append(p.NotApplied, NotApplicable{text, err.Error()})
			continue
		}
		p.Change, p.New, p.NewEnv, p.Diff = text, next, nextEnv, diff
		return p
	}
	return p
}

// PlanUndo is the restart with the command line before the last applied
// change; false when nothing was applied.
func (s *Session) PlanUndo() (Plan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) == 0 {
		return Plan{}, false
	}
	prev := s.history[len(s.history)-1]
	cur := s.cur
	diff := append(envDiff(cur.Env, prev.env), argDiff(cur.Args, prev.args)...)
	return Plan{Finding: "undo", Change: s.marks[len(s.marks)-1], Old: slices.Clone(cur.Args), New: slices.Clone(prev.args),
		OldEnv: slices.Clone(cur.Env), NewEnv: slices.Clone(prev.env), Diff: diff, Undo: true}, true
}

// envDiff writes what changed from environment a to b, as ApplyEnv does
// (a variable b drops is inherited again: "(removed)").
func envDiff(a, b []string) []string {
	var out []string
	var names []string
	for _, kv := range append(slices.Clone(a), b...) {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	for _, k := range names {
		va, ina := envValue(a, k)
		vb, inb := envValue(b, k)
		switch {
		case ina && !inb:
			out = append(out, k+" (removed)")
		case !ina && inb:
			out = append(out, k+" (default) → "+vb)
		case va != vb:
			out = append(out, k+" "+va+" → "+vb)
		}
	}
	return out
}

// argDiff writes what changed from a to b flag by flag, as Apply does.
func argDiff(a, b []string) []string {
	fa, fb := flags(a), flags(b)
	var out []string
	for _, k := range orderedKeys(a, b) {
		va, ina := fa[k]
		vb, inb := fb[k]
		switch {
		case ina && !inb:
			out = append(out, k+" (removed)")
		case !ina && inb && vb == "":
			out = append(out, k+" (added)")
		case !ina && inb:
			out = append(out, k+" (default) → "+vb)
		case va != vb:
			out = append(out, k+" "+va+" → "+vb)
		}
	}
	if len(out) == 0 && !slices.Equal(a, b) {
		out = append(out, Quote(a)+" → "+Quote(b))
	}
	return out
}

func flags(args []string) map[string]string {
	m := map[string]string{}
	for i := 1; i < len(args); i++ {
		if !isFlag(args[i]) {
			continue
		}
		n, v, eq := strings.Cut(args[i], "=")
		if !eq && i+1 < len(args) && !isFlag(args[i+1]) {
			v = args[i+1]
		}
		m[n] = v
	}
	return m
}

func orderedKeys(a, b []string) []string {
	var out []string
	for _, args := range [][]string{a, b} {
		for i := 1; i < len(args); i++ {
			if isFlag(args[i]) {
				n, _, _ := strings.Cut(args[i], "=")
				if !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// Restart carries out p: the engine is stopped (SIGTERM, SIGKILL after
// Grace) and p.New started with p.NewEnv and the same log. progress
// hears each step in words.
func (s *Session) Restart(p Plan, progress func(string)) (*Proc, Stopped, error) {
	if err := s.CanRestart(p); err != nil {
		return nil, Stopped{}, err
	}
	s.mu.Lock()
	old := s.cur
	s.mu.Unlock()
	progress(fmt.Sprintf("stopping pid %d: SIGTERM, waiting up to %s for it to drain, then SIGKILL", old.PID, s.Grace))
	st := old.Stop(s.Grace)
	progress("pid " + fmt.Sprint(old.PID) + " " + st.String())
	s.mu.Lock()
	logPath := s.Log
	s.mu.Unlock()
	np, err := Start(p.New, p.NewEnv, logPath)
	if err != nil {
		return nil, st, err
	}
	s.mu.Lock()
	if p.Undo {
		s.history, s.marks = s.history[:len(s.history)-1], s.marks[:len(s.marks)-1]
	} else {
		s.history, s.marks = append(s.history, launchLine{old.Env, old.Args}), append(s.marks, p.Mark())
	}
	s.cur = np
	s.mu.Unlock()
	_ = np.WriteNote()
	progress(fmt.Sprintf("started pid %d: %s", np.PID, QuoteCommand(np.Env, np.Args)))
	return np, st, nil
}

// CanRestart says why Restart would refuse p before stopping anything
// (nil: it would stop the engine and start p's command line).
func (s *Session) CanRestart(p Plan) error {
	if !p.OK() {
		return errors.New("nothing to apply")
	}
	s.mu.Lock()
	old := s.cur
	s.mu.Unlock()
	if !slices.Equal(old.Args, p.Old) || !slices.Equal(old.Env, p.OldEnv) {
		return errors.New("the engine's command line changed since this was planned: plan again")
	}
	return nil
}

// SetLog sends the next start's output to path (tune keeps one log a
// step).
func (s *Session) SetLog(path string) {
	s.mu.Lock()
	s.Log = path
	s.mu.Unlock()
}

// CanUndo reports whether an applied change can be undone.
func (s *Session) CanUndo() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.history) > 0
}

// WaitServing waits until the engine answers its models route (it has
// loaded and serves), the process exits, or ctx ends.
func (s *Session) WaitServing(ctx context.Context) error {
	p := s.Current()
	c := http.Client{Timeout: 2 * time.Second}
	for {
		for _, route := range []string{"/v1/models", "/api/tags"} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+route, nil)
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.Done():
			_, how := p.Exited()
			return fmt.Errorf("the engine %s before it served; its log: %s", how, s.Log)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
