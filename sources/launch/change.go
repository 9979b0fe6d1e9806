package launch

import (
	"regexp"
	"slices"
	"strings"

	"github.com/llmtop/llmtop/engines"
)

// A finding's action says its change in words a person can type: "--max-num-seqs
// 32", "-np 4 -kvu (keep -c)", "--max-num-batched-tokens 2048 without
// --no-enable-chunked-prefill", "OLLAMA_NUM_PARALLEL=4". Change is such a
// text read as flags to set, flags to drop and environment variables to
// set: the command line llmtop launches is [NAME=VALUE…] ENGINE ARGS…, so
// an engine configured by its environment (Ollama) is restarted with the
// changed environment. What cannot be read that way (another replica, a
// value left to the user, words) is refused with the reason, to be shown
// and not applied.

// Flag is one flag to set: Value is "" for a switch.
type Flag struct {
	Name, Value string
}

// Change is an action's change of a command line.
type Change struct {
	Text   string // the action's words
	Set    []Flag
	Remove []string
	Env    []Flag // environment variables to set (NAME=VALUE)
}

// NotApplicable says why an action is not a change of the command line.
type NotApplicable struct {
	Change, Why string
}

func (e *NotApplicable) Error() string { return e.Change + ": " + e.Why }

// moreHardware are flags that ask for GPUs the engine does not have now:
// every engine's data-, tensor- and pipeline-parallel flags (engines/).
var moreHardware = func() map[string]bool {
	out := map[string]bool{}
	for _, s := range engines.All() {
		l := s.Levers
		for _, f := range append(append([]string{l.DataParallel}, l.TensorParallel...), l.MoreGPUs...) {
			if f, _, _ = strings.Cut(f, " "); f != "" {
				out[normFlag(f)] = true
			}
		}
	}
	return out
}()

// endpointEnv are the variables that say where the engine listens.
var endpointEnv = map[string]bool{"OLLAMA_HOST": true, "LLAMA_ARG_PORT": true, "LLAMA_ARG_HOST": true}

var (
	envAssign = regexp.MustCompile(`^[A-Z][A-Z0-9_]*=`)
	paren     = regexp.MustCompile(`\(([^()]*)\)`)
	number    = regexp.MustCompile(`^-?[0-9.]+$`)
)

// ParseChange reads an action's change. A parenthesised remark is dropped
// ("(keep -c)", "(or another replica behind a router)") unless it names
// what the change needs with it ("(with -fa on)"), whose flags are set too.
func ParseChange(text string) (Change, error) {
	c := Change{Text: text}
	body := paren.ReplaceAllStringFunc(text, func(m string) string {
		in := strings.TrimSpace(m[1 : len(m)-1])
		if rest, ok := strings.CutPrefix(in, "with "); ok {
			return " " + rest + " "
		}
		return " "
	})
	// A comma separates changes ("OLLAMA_CONTEXT_LENGTH=8192,
	// OLLAMA_NUM_PARALLEL=1").
	var words []string
	for _, w := range strings.Fields(body) {
		if w = strings.TrimSuffix(w, ","); w != "" {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return c, &NotApplicable{text, "no change given"}
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case envAssign.MatchString(w):
			name, val, _ := strings.Cut(w, "=")
			if val == "N" || val == "" || strings.ContainsAny(val, "<>…") {
				return c, &NotApplicable{text, "the action leaves the value of " + name + " to you"}
			}
			if endpointEnv[name] {
				return c, &NotApplicable{text, name + " moves the engine's endpoint: llmtop would lose the engine it watches"}
			}
			c.Env = append(c.Env, Flag{Name: name, Value: val})
		case w == "without" && i+1 < len(words) && isFlag(words[i+1]):
			c.Remove = append(c.Remove, words[i+1])
			i++
		case isFlag(w):
			name, val, hasEq := strings.Cut(w, "=")
			if moreHardware[normFlag(name)] {
				return c, &NotApplicable{text, "more hardware (" + name + "): another GPU or replica is not a flag llmtop can change"}
			}
			if !hasEq && i+1 < len(words) && !isFlag(words[i+1]) && words[i+1] != "without" {
				val = words[i+1]
				i++
			}
			if val == "N" || strings.ContainsAny(val, "<>…") {
				return c, &NotApplicable{text, "the action leaves the value of " + name + " to you"}
			}
			c.Set = append(c.Set, Flag{Name: name, Value: val})
		default:
			return c, &NotApplicable{text, "not a flag change (" + strings.Join(words[i:min(i+4, len(words))], " ") + "…): it needs a person"}
		}
	}
	if len(c.Set) == 0 && len(c.Remove) == 0 && len(c.Env) == 0 {
		return c, &NotApplicable{text, "no flag to change"}
	}
	return c, nil
}

func isFlag(w string) bool {
	return strings.HasPrefix(w, "-") && len(w) > 1 && !number.MatchString(w)
}

// aliases are flags spelled two ways (llama-server's short and long forms:
// each engine's FlagAliases in engines/); a change is matched against
// either.
var aliases = func() [][]string {
	var out [][]string
	for _, s := range engines.All() {
		out = append(out, s.FlagAliases...)
	}
	return out
}()

// normFlag writes a flag the one way it is compared: vLLM and SGLang take
// --max_num_seqs as --max-num-seqs.
func normFlag(f string) string {
	if strings.HasPrefix(f, "--") {
		return "--" + strings.ReplaceAll(f[2:], "_", "-")
	}
	return f
}

func sameFlag(a, b string) bool {
	a, b = normFlag(a), normFlag(b)
	if a == b {
		return true
	}
	for _, g := range aliases {
		if slices.Contains(g, a) && slices.Contains(g, b) {
			return true
		}
	}
	return false
}

// Apply turns args (the program first) into the command line with c
// applied, and says what changed, one line a flag ("--max-num-seqs 16 →
// 32", "-kvu (added)", "--no-enable-chunked-prefill (removed)"). A change
// that changes nothing is an error: the command line already has it.
func Apply(args []string, c Change) ([]string, []string, error) {
	out, diff := applyArgs(args, c)
	if len(diff) == 0 {
		return nil, nil, &NotApplicable{c.Text, "the command line already has it"}
	}
	return out, diff, nil
}

// ApplyEnv is Apply for the whole launch: the environment llmtop adds
// (env, NAME=VALUE) and the command line. A variable not in env is read
// from inherited (llmtop's own environment, which the engine inherits) for
// its old value: "OLLAMA_NUM_PARALLEL 1 → 4", "OLLAMA_KEEP_ALIVE (default)
// → -1".
func ApplyEnv(env, args []string, c Change, inherited func(string) (string, bool)) (newEnv, newArgs, diff []string, err error) {
	newEnv = slices.Clone(env)
	for _, f := range c.Env {
		old, had := envValue(newEnv, f.Name)
		if !had && inherited != nil {
			old, had = inherited(f.Name)
		}
		if had && old == f.Value {
			continue
		}
		newEnv = setEnv(newEnv, f.Name, f.Value)
		if had {
			diff = append(diff, f.Name+" "+old+" → "+f.Value)
		} else {
			diff = append(diff, f.Name+" (default) → "+f.Value)
		}
	}
	newArgs, d := applyArgs(args, c)
	diff = append(diff, d...)
	if len(diff) == 0 {
		return nil, nil, nil, &NotApplicable{c.Text, "the command line already has it"}
	}
	return newEnv, newArgs, diff, nil
}

// envValue is NAME's value in env (the last assignment wins, as exec's).
func envValue(env []string, name string) (string, bool) {
	v, ok := "", false
	for _, kv := range env {
		if k, val, _ := strings.Cut(kv, "="); k == name {
			v, ok = val, true
		}
	}
	return v, ok
}

// setEnv sets NAME in env, in place of its assignment if it has one.
func setEnv(env []string, name, value string) []string {
	out := env[:0:0]
	set := false
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			if !set {
				out = append(out, name+"="+value)
				set = true
			}
			continue
		}
		out = append(out, kv)
	}
	if !set {
		out = append(out, name+"="+value)
	}
	return out
}

// applyArgs applies c's flags to args.
func applyArgs(args []string, c Change) ([]string, []string) {
	out := slices.Clone(args)
	var diff []string
	for _, name := range c.Remove {
		var kept []string
		removed := false
		for i, a := range out {
			n, _, _ := strings.Cut(a, "=")
			if i > 0 && sameFlag(n, name) {
				removed = true
				continue
			}
			kept = append(kept, a)
		}
		if removed {
			out = kept
			diff = append(diff, name+" (removed)")
		}
	}
	for _, f := range c.Set {
		at, hasVal, eq := -1, false, false
		for i := 1; i < len(out); i++ {
			n, _, e := strings.Cut(out[i], "=")
			if sameFlag(n, f.Name) {
				at, eq = i, e
				hasVal = e || (i+1 < len(out) && !isFlag(out[i+1]))
			}
		}
		switch {
		case at < 0 && f.Value == "":
			out = append(out, f.Name)
			diff = append(diff, f.Name+" (added)")
		case at < 0:
			out = append(out, f.Name, f.Value)
			diff = append(diff, f.Name+" (default) → "+f.Value)
		case f.Value == "":
			// a switch already on
		case eq:
			n, old, _ := strings.Cut(out[at], "=")
			if old != f.Value {
				out[at] = n + "=" + f.Value
				diff = append(diff, f.Name+" "+old+" → "+f.Value)
			}
		case hasVal:
			if old := out[at+1]; old != f.Value {
				out[at+1] = f.Value
				diff = append(diff, f.Name+" "+old+" → "+f.Value)
			}
		default:
			out = slices.Insert(out, at+1, f.Value)
			diff = append(diff, f.Name+" (on) → "+f.Value)
		}
	}
	return out, diff
}

// Quote writes args as a shell would read them back (for the screen, the
// trail and the note beside the log).
func Quote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// QuoteCommand writes a launch as a shell would read it back: the
// environment llmtop adds, then the command line.
func QuoteCommand(env, args []string) string {
	if len(env) == 0 {
		return Quote(args)
	}
	return Quote(env) + " " + Quote(args)
}

// Describe is the change's diff as one line.
func Describe(diff []string) string { return strings.Join(diff, ", ") }
