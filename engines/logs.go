package engines

import (
	"sync"

	"github.com/llmtop/llmtop/model"
)

// LogLine is one known log message. An engine's own lines are in its file
// (Spec.Logs); the lines of the runtimes engines share are in runtimes.go.
// Adding a message means adding a row (and its examples in
// sources/logs/catalogue_test.go).
type LogLine struct {
	ID string
	// Engines are who print it: filled from the Spec for an engine's own
	// lines; empty = any engine.
	Engines []model.Engine
	Sev     model.Severity
	// Category is memory, availability, config, auth, distributed, stats
	// or lifecycle.
	Category string
	// Needle is a literal every matching line contains (or several,
	// separated by "|", one of which it contains): a cheap prefilter before
	// the regular expression runs.
	Needle string
	// Unless: a line containing this literal is not a match (RE2 has no
	// look-behind).
	Unless string
	// Regex finds the message anywhere in the line; its named groups are
	// the extracted fields (sizes, ports, estimates…).
	Regex string
	// Title is the event's headline; {field} is replaced by that field.
	Title string
	// Meaning says what it means and what to do; it travels as the
	// event's "hint" field.
	Meaning string
	// Phase, when set, is the lifecycle step the line announces (a start
	// banner, weights loaded, ready, shutting down, a crash: model.Phase*);
	// it travels as the event's "phase" field and moves the endpoint's
	// lifecycle and runs.
	Phase string
	// Fix, when set, is the engine's own remedy for the line (the
	// diagnosis's actions for its finding): its words and flags live
	// here, with the line.
	Fix []Change
	// Finding, when set, is the diagnosis finding the line opens (its
	// id: "startup_max_len_kv", "ggml_oom"…): which failure an engine's
	// line means is known here, with the line; the diagnosis holds each
	// failure's cause and the arithmetic of its fix.
	Finding string
	// Reports, when set, is a size the line states, which the diagnosis
	// weighs (the memory the weights took on a GPU, the KV cache's).
	Reports Amount
	// StepBudget, when set, is the field of a start-up line that states
	// the tokens one engine step carries (chunked prefill's budget).
	StepBudget string
	// PromptOver, when set, are the fields of a line that says a prompt
	// was rejected for exceeding its (slot's) context: the prompt's
	// tokens and the context's.
	PromptOver struct{ Prompt, Context string }
	// Drafts, when set, are the fields of a request's speculative tally:
	// the draft tokens accepted, those drafted, and the acceptance by
	// position.
	Drafts struct{ Accepted, Drafted, PerPos string }
	// Refused: the line says the server refused a client's request as
	// invalid (an HTTP 4xx), and why.
	Refused bool
	// Emulates, when set, is the number format the line says the GPU has
	// no compute for, so the engine expands it in software ("fp8":
	// weight-only fp8 through Marlin kernels).
	Emulates string
}

// Amount is a size a log line states: what it is, the field that holds it
// and the bytes in one of its units.
type Amount struct {
	What  string
	Field string
	Unit  float64
}

// What an Amount is.
const (
	// AmountWeights is the memory one GPU's share of the weights took.
	AmountWeights = "weights"
	// AmountKV is the memory the KV cache got.
	AmountKV = "kv"
)

// gibOf and mibOf are amounts stated in GiB and MiB in field f.
func gibOf(what, f string) Amount { return Amount{What: what, Field: f, Unit: 1 << 30} }
func mibOf(what, f string) Amount { return Amount{What: what, Field: f, Unit: 1 << 20} }

// LogReports is what a log line kind states (zero when none).
func LogReports(kind string) Amount { return byID()[kind].Reports }

// StepBudgetLine is the kind of the start-up line that states an engine's
// step budget, and the field it is in ("" when none does).
func StepBudgetLine() (kind, field string) {
	for _, l := range LogLines() {
		if l.StepBudget != "" {
			return l.ID, l.StepBudget
		}
	}
	return "", ""
}

// promptOver and drafts fill LogLine.PromptOver and LogLine.Drafts.
func promptOver(prompt, ctx string) (p struct{ Prompt, Context string }) {
	p.Prompt, p.Context = prompt, ctx
	return p
}

func drafts(accepted, drafted, perPos string) (d struct{ Accepted, Drafted, PerPos string }) {
	d.Accepted, d.Drafted, d.PerPos = accepted, drafted, perPos
	return d
}

// LogOf is the catalogue's row of a log line kind (zero when unknown),
// from an index built once: the diagnosis asks it of every event it reads.
func LogOf(kind string) LogLine { return byID()[kind] }

// LogRefused reports whether a log line kind says a request was refused
// as invalid (LogLine.Refused).
func LogRefused(kind string) bool { return byID()[kind].Refused }

// LogEmulates is the number format a log line kind says the GPU emulates
// ("" none).
func LogEmulates(kind string) string { return byID()[kind].Emulates }

// byID is the catalogue by kind (the first row of a kind), built once: the
// diagnosis asks it of every event it reads.
var byID = sync.OnceValue(func() map[string]LogLine {
	m := map[string]LogLine{}
	for _, l := range LogLines() {
		if _, ok := m[l.ID]; !ok {
			m[l.ID] = l
		}
	}
	return m
})

const (
	info = model.SevInfo
	warn = model.SevWarn
	crit = model.SevCrit
)

// LogLines is the log catalogue: every engine's own lines (in registry
// order, each engine's most specific first), then the runtimes' shared
// lines, the generic ones last. A line raises at most one event, the first
// row that matches, so the more specific reading wins.
func LogLines() []LogLine {
	var out []LogLine
	for _, s := range all {
		for _, l := range s.Logs {
			if len(l.Engines) == 0 {
				l.Engines = []model.Engine{s.ID}
			}
			out = append(out, l)
		}
	}
	for _, ls := range [][]LogLine{torchLogs, ggmlLogs, anyLogs} {
		out = append(out, ls...)
	}
	return out
}

// LogEngine is the one engine that prints a log line kind (Unknown for a
// line several engines print, or an unknown kind): a log that holds it
// says which engine wrote it.
func LogEngine(kind string) model.Engine {
	for _, s := range all {
		for _, l := range s.Logs {
			if l.ID == kind && len(l.Engines) <= 1 {
				return s.ID
			}
		}
	}
	return model.Unknown
}

// LogsShutdown reports whether an engine's log says so when it shuts down
// cleanly (a line of it, or of its runtime, announces model.PhaseStopping
// or model.PhaseStopped): only then does a silent log mean the process was
// killed.
func LogsShutdown(e model.Engine) bool {
	for _, l := range LogLines() {
		if l.Phase != model.PhaseStopping && l.Phase != model.PhaseStopped {
			continue
		}
		for _, x := range l.Engines {
			if x == e {
				return true
			}
		}
	}
	return false
}

// LogLineByID is the catalogue's row of a log line kind.
func LogLineByID(id string) (LogLine, bool) {
	for _, s := range all {
		for _, l := range s.Logs {
			if l.ID == id {
				if len(l.Engines) == 0 {
					l.Engines = []model.Engine{s.ID}
				}
				return l, true
			}
		}
	}
	for _, ls := range [][]LogLine{torchLogs, ggmlLogs, anyLogs} {
		for _, l := range ls {
			if l.ID == id {
				return l, true
			}
		}
	}
	return LogLine{}, false
}
