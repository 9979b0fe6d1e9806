package launch

import (
	"regexp"
	"slices"
	"strings"
)

// A finding's action says its change in words a person can type: "--max-num-seqs
// 32", "-np 4 -kvu (keep -c)", "--max-num-batched-tokens 2048 without
// --no-enable-chunked-prefill". Change is such a text read as flags to set
// and flags to drop; what cannot be read that way (an environment
// variable, another replica, a value left to the user) is refused with the
// reason, to be shown and not applied.

// Flag is one flag to set: Value is "" for a switch.
type Flag struct {
	Name, Value string
}

// Change is an action's change of a command line.
type Change struct {
	Text   string // the action's words
	Set    []Flag
	Remove []string
}

// NotApplicable says why an action is not a change of the command line.
type NotApplicable struct {
	Change, Why string
}

func (e *NotApplicable) Error() string { return e.Change + ": " + e.Why }

// moreHardware are flags that ask for GPUs the engine does not have now.
var moreHardware = map[string]bool{
	"--data-parallel-size": true, "-dp": true, "--dp-size": true, "--dp": true,
	"--tensor-parallel-size": true, "-tp": true, "--tp-size": true, "--tp": true,
	"--pipeline-parallel-size": true, "-pp": true, "--num-shard": true, "--tp_size": true,
}

var (
	envAssign = regexp.MustCompile(`^[A-Z][A-Z0-9_]*=`)
	paren     = regexp.MustCompile(`\(([^()]*)\)`)
	number    = regexp.MustCompile(`^-?[0-9.]+$`)
)

// ParseChange reads an action's change. A parenthesised remark is dropped
// ("(keep -c)", "(or another replica behind the router)") unless it names
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
	words := strings.Fields(body)
	if len(words) == 0 {
		return c, &NotApplicable{text, "no change given"}
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case envAssign.MatchString(w):
			return c, &NotApplicable{text, "an environment variable (" + strings.SplitN(w, "=", 2)[0] + "): set it in the engine's environment and restart it yourself"}
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
	if len(c.Set) == 0 && len(c.Remove) == 0 {
		return c, &NotApplicable{text, "no flag to change"}
	}
	return c, nil
}

func isFlag(w string) bool {
	return strings.HasPrefix(w, "-") && len(w) > 1 && !number.MatchString(w)
}

// aliases are flags spelled two ways (llama-server's short and long forms);
// a change is matched against either.
var aliases = [][]string{
	{"-np", "--parallel"}, {"-c", "--ctx-size"}, {"-ub", "--ubatch-size"}, {"-b", "--batch-size"},
	{"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"}, {"-fa", "--flash-attn"},
	{"-kvu", "--kv-unified"}, {"-ngl", "--n-gpu-layers", "--gpu-layers"}, {"-m", "--model"},
}

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
	if len(diff) == 0 {
		return nil, nil, &NotApplicable{c.Text, "the command line already has it"}
	}
	return out, diff, nil
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

// Describe is the change's diff as one line.
func Describe(diff []string) string { return strings.Join(diff, ", ") }
