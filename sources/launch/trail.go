package launch

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// `llmtop tune` writes what it did as a trail: the load, the noise it
// measured, and each step's change with its before → after. The decision
// rule lives here, pure: a change is kept only if the goal metric improved
// by more than the run-to-run noise (at least MinGain).

// Measure is one benchmark's numbers (client side, ms and tok/s).
type Measure struct {
	Served    bool      `json:"served"`
	Completed int       `json:"completed"`
	Failed    int       `json:"failed"`
	TTFTp99ms model.Opt `json:"ttft_p99_ms"`
	TPOTp99ms model.Opt `json:"tpot_p99_ms"`
	ITLp99ms  model.Opt `json:"itl_p99_ms"`
	OutputTPS model.Opt `json:"output_tokens_per_s"`
	// The server's own view of the run over the watch (its /metrics):
	// finished requests/s and TTFT p99, all traffic included.
	ServerRPS       model.Opt `json:"server_requests_per_s"`
	ServerTTFTp99ms model.Opt `json:"server_ttft_p99_ms"`
}

// Goal is the metric a step is judged by.
type Goal string

const (
	GoalTTFT       Goal = "ttft_p99"
	GoalTPOT       Goal = "tpot_p99"
	GoalITL        Goal = "itl_p99"
	GoalThroughput Goal = "output_tps"
	// GoalServerTTFT is the server's own TTFT p99 over the run, all
	// traffic included: for a finding about requests the benchmark does
	// not send (a LoRA adapter's). Two benchmarks do not measure its noise
	// (it covers the whole run), so a change must move it by
	// ServerTTFTNeed at least.
	GoalServerTTFT Goal = "server_ttft_p99"
)

// ServerTTFTNeed is the factor a change must move the server's TTFT p99
// by: its noise is not measured, so a third better, not the 5 % floor.
const ServerTTFTNeed = 1.5

// Goals are every goal, in the order the trail lists their noise.
var Goals = []Goal{GoalTTFT, GoalTPOT, GoalITL, GoalThroughput}

// Value is m's number for g, and whether lower is better.
func (g Goal) Value(m Measure) (model.Opt, bool) {
	switch g {
	case GoalTPOT:
		return m.TPOTp99ms, true
	case GoalITL:
		return m.ITLp99ms, true
	case GoalThroughput:
		return m.OutputTPS, false
	case GoalServerTTFT:
		return m.ServerTTFTp99ms, true
	}
	return m.TTFTp99ms, true
}

// unit is what g's numbers count, as the verdict writes it after them.
func (g Goal) unit() string {
	if g == GoalThroughput {
		return " tok/s"
	}
	return " ms"
}

// Noise is the run-to-run noise: the goal metric of two benchmarks at the
// same load on the unchanged engine, one after the other. Latencies spread
// by ratios (a queue that doubles doubles TTFT), so the noise is a factor:
// the larger of the two over the smaller.
type Noise struct {
	Goal     Goal    `json:"goal"`
	A        float64 `json:"a,omitempty"` // the goal metric of the first and second benchmark
	B        float64 `json:"b,omitempty"`
	Relative float64 `json:"relative"` // |A−B| / max(A, B)
	Factor   float64 `json:"factor"`   // max(A, B) / min(A, B)
	// Need is the factor a change must move the goal by, the right way:
	// twice the noise (Factor²), and at least 1/(1−MinGain).
	Need float64 `json:"need_factor"`
	// Threshold is Need as a relative gain on a lower-is-better metric
	// (1 − 1/Need), for the table.
	Threshold float64 `json:"threshold"`
	How       string  `json:"how"`
}

// MinGain is the smallest relative gain a change is kept for.
const MinGain = 0.05

// MeasureNoise turns two benchmarks at the same load into the noise.
func MeasureNoise(g Goal, a, b Measure) Noise {
	floor := 1 / (1 - MinGain)
	n := Noise{Goal: g, Factor: 1, Need: floor, Threshold: MinGain,
		How: "two benchmarks at the same load on the unchanged engine, back to back: noise factor f = max/min of their goal metric; a change must move it by more than f² (twice the noise, in ratio), at least 5 %"}
	if g == GoalServerTTFT {
		n.Need, n.Threshold = ServerTTFTNeed, 1-1/ServerTTFTNeed
		n.How = "the server's TTFT p99 covers its whole run, so two benchmarks do not measure its noise: a change must move it by a factor of 1.5 (a third)"
		return n
	}
	va, _ := g.Value(a)
	vb, _ := g.Value(b)
	if !va.OK || !vb.OK || math.Min(va.V, vb.V) <= 0 {
		n.How += "; the goal was not measured twice, so the 5 % floor applies"
		return n
	}
	n.A, n.B = va.V, vb.V
	n.Relative = math.Abs(va.V-vb.V) / math.Max(va.V, vb.V)
	n.Factor = math.Max(va.V, vb.V) / math.Min(va.V, vb.V)
	n.Need = math.Max(n.Factor*n.Factor, floor)
	n.Threshold = 1 - 1/n.Need
	return n
}

// Judge says whether after is better than before by more than the noise,
// and why, in words.
func Judge(g Goal, before, after Measure, n Noise) (bool, string) {
	need := math.Max(n.Need, 1/(1-MinGain))
	beyond := fmt.Sprintf("the noise needs a factor of %.2f (%.0f %%)", need, (1-1/need)*100)
	switch {
	case !after.Served && before.Served:
		return false, "the engine did not serve after the change"
	case after.Served && !before.Served:
		return true, "the engine serves after the change (it did not before)"
	case !after.Served:
		return false, "the engine served neither before nor after"
	case before.Completed == 0 && after.Completed > 0:
		return true, fmt.Sprintf("requests finish now: 0 → %d within the benchmark (before, none finished: a queue longer than the benchmark)", after.Completed)
	case after.Completed == 0 && before.Completed > 0:
		return false, fmt.Sprintf("no request finished within the benchmark after the change (%d before)", before.Completed)
	case after.Completed == 0 && before.Completed == 0:
		// Under a queue longer than the benchmark, the server's finished
		// requests/s at the same arrivals is what can still be compared.
		b, a := before.ServerRPS, after.ServerRPS
		if !b.OK || !a.OK || b.V <= 0 || a.V <= 0 {
			return false, "no benchmark request finished on either run, and the server's finished requests/s is not known on both"
		}
		word := fmt.Sprintf("no benchmark request finished on either run; the server finished %s → %s requests/s (%+.0f %%)", num(b.V), num(a.V), (a.V/b.V-1)*100)
		if a.V/b.V > need {
			return true, word + ": better; " + beyond
		}
		return false, word + ": not better than the noise; " + beyond
	}
	vb, lower := g.Value(before)
	va, _ := g.Value(after)
	if !vb.OK || !va.OK || vb.V <= 0 || va.V <= 0 {
		return false, fmt.Sprintf("%s not measured on both runs", g)
	}
	ratio := vb.V / va.V // how much better, as a factor
	if !lower {
		ratio = va.V / vb.V
	}
	word := fmt.Sprintf("%s %s → %s%s (%+.0f %%)", g, num(vb.V), num(va.V), g.unit(), (va.V/vb.V-1)*100)
	// A latency bought by finishing less is not better.
	if tb, ta := before.OutputTPS, after.OutputTPS; ratio > need && lower && tb.OK && ta.OK && ta.V > 0 && tb.V/ta.V > need {
		return false, word + fmt.Sprintf(", but output tok/s fell %s → %s, past the noise: not better; ", num(tb.V), num(ta.V)) + beyond
	}
	if ratio > need {
		return true, word + ": better; " + beyond
	}
	return false, word + ": not better than the noise; " + beyond
}

func num(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// Step is one step of the trail.
type Step struct {
	N        int      `json:"n"`
	Finding  string   `json:"finding,omitempty"`
	Change   string   `json:"change,omitempty"` // the action's words
	Diff     []string `json:"diff,omitempty"`
	Command  string   `json:"command"`
	Measure  Measure  `json:"measure"`
	Goal     Goal     `json:"goal,omitempty"`
	Before   *Measure `json:"before,omitempty"` // the kept configuration's numbers
	Kept     bool     `json:"kept"`
	Why      string   `json:"why,omitempty"`
	Open     []string `json:"open_findings"`
	NotTried []string `json:"not_applied,omitempty"` // actions that are not a change of the command line
	// NoiseByGoal is the noise measured on this step's configuration once
	// it was kept (two benchmarks on it, back to back): the changes after
	// it are judged against it, not against the noise of a configuration
	// that is gone (a queue-bound start spreads ITL p99 ×1.5 where the
	// fixed engine spreads it a few per cent).
	NoiseByGoal map[Goal]Noise `json:"noise_by_goal,omitempty"`
	// NoiseSkipped says why the noise was not measured on this kept
	// configuration (no step follows to be judged against it).
	NoiseSkipped string `json:"noise_skipped,omitempty"`
}

// Trail is what tune did.
type Trail struct {
	Start string          `json:"start_command"`
	Load  model.BenchLoad `json:"load"`
	// Noise is the first goal's noise; NoiseByGoal every goal's, from the
	// same two benchmarks: a step is judged against its own goal's noise
	// (TTFT spread ×2.45 between two benchmarks while TPOT moved 2 %).
	Noise       Noise          `json:"noise"`
	NoiseByGoal map[Goal]Noise `json:"noise_by_goal,omitempty"`
	Steps       []Step         `json:"steps"`
	Final       string         `json:"final_command"`
	Open        []string       `json:"open_findings"`
	Stopped     string         `json:"stopped"`
}

// NoiseFor is g's noise; measured on no two benchmarks, the floor.
func (t Trail) NoiseFor(g Goal) Noise {
	if n, ok := t.NoiseByGoal[g]; ok {
		return n
	}
	return MeasureNoise(g, Measure{}, Measure{})
}

// KeptNoiseFor is g's noise on the configuration a next change is judged
// against: the newest kept step's where it was measured there, else the
// trail's.
func (t Trail) KeptNoiseFor(g Goal) Noise {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		s := t.Steps[i]
		if !s.Kept {
			continue
		}
		if n, ok := s.NoiseByGoal[g]; ok {
			return n
		}
		break // kept, but its noise was not measured: the trail's stands
	}
	return t.NoiseFor(g)
}

// NoiseText is each goal's noise and the factor a change must beat:
// "ttft_p99 ×1.30 (a change must move it ×1.69), tpot_p99 …".
func (t Trail) NoiseText() string {
	if len(t.NoiseByGoal) == 0 {
		return fmt.Sprintf("%s ×%.2f (a change must move it ×%.2f)", t.Noise.Goal, t.Noise.Factor, t.Noise.Need)
	}
	return NoiseText(t.NoiseByGoal)
}

// NoiseText writes each goal's noise in ns.
func NoiseText(ns map[Goal]Noise) string {
	var parts []string
	for _, g := range Goals {
		if n, ok := ns[g]; ok {
			if n.A == 0 {
				parts = append(parts, fmt.Sprintf("%s not measured twice (×%.2f floor)", g, n.Need))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s ×%.2f (a change must move it ×%.2f)", g, n.Factor, n.Need))
		}
	}
	return strings.Join(parts, ", ")
}

// MeasureNoises is MeasureNoise for every goal.
func MeasureNoises(a, b Measure) map[Goal]Noise {
	out := map[Goal]Noise{}
	for _, g := range Goals {
		out[g] = MeasureNoise(g, a, b)
	}
	return out
}

// Table is the trail as a short table.
func (t Trail) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "load: %s · noise between two benchmarks: %s\n", t.Load, t.NoiseText())
	fmt.Fprintf(&b, "start: %s\n", t.Start)
	// The change is written whole (its new value is the point of the
	// line), the column as wide as the widest, up to maxChange.
	whats := make([]string, len(t.Steps))
	width := len([]rune("finding → change"))
	for i, s := range t.Steps {
		whats[i] = "(start)"
		if s.Finding != "" {
			whats[i] = clipTo(s.Finding+" → "+strings.Join(s.Diff, ", "), maxChange)
		}
		width = max(width, len([]rune(whats[i])))
	}
	row := func(step, what, ttft, tpot, kept, open string) {
		fmt.Fprintf(&b, "%-4s %s %-26s %-26s %-5s %s\n", step, pad(what, width), ttft, tpot, kept, open)
	}
	row("step", "finding → change", "TTFT p99 before → after", "TPOT p99 before → after", "kept", "open findings after")
	for i, s := range t.Steps {
		bt, bp := "", ""
		if s.Before != nil {
			bt, bp = ms(s.Before.TTFTp99ms, s.Before.Served)+" → ", ms(s.Before.TPOTp99ms, s.Before.Served)+" → "
		}
		kept := "-"
		if s.N > 0 {
			kept = map[bool]string{true: "yes", false: "no"}[s.Kept]
		}
		row(fmt.Sprint(s.N), whats[i], bt+ms(s.Measure.TTFTp99ms, s.Measure.Served), bp+ms(s.Measure.TPOTp99ms, s.Measure.Served), kept, orNone(s.Open))
		if s.N > 0 && s.Kept && len(s.NoiseByGoal) > 0 {
			fmt.Fprintf(&b, "     noise on this configuration, for the steps after it: %s\n", NoiseText(s.NoiseByGoal))
		} else if s.N > 0 && s.Kept && s.NoiseSkipped != "" {
			fmt.Fprintf(&b, "     noise on this configuration: not measured, because %s\n", s.NoiseSkipped)
		}
	}
	fmt.Fprintf(&b, "final: %s\nopen findings: %s\nstopped: %s\n", t.Final, orNone(t.Open), t.Stopped)
	return b.String()
}

// maxChange is the widest the table writes a step's change.
const maxChange = 72

// pad writes s left-aligned in n columns (runes, not bytes: "→" is one).
func pad(s string, n int) string {
	if k := len([]rune(s)); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

func ms(o model.Opt, served bool) string {
	switch {
	case !served:
		return "not serving"
	case !o.OK:
		return "--"
	case o.V >= 1000:
		return fmt.Sprintf("%.2f s", o.V/1000)
	}
	return fmt.Sprintf("%.0f ms", o.V)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func clipTo(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
