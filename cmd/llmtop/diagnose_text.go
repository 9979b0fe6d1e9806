package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// printDiagnosis writes the result for people: endpoints, then each finding
// with its evidence, cause and actions, then what was checked and what
// could not be.
func printDiagnosis(out io.Writer, res diagnoseResult) {
	badge := ""
	if res.Simulated {
		badge = "  [SIMULATED]"
	}
	fmt.Fprintf(out, "llmtop diagnose: watched %d endpoint(s) for %.0f s (SLO: TTFT p99 ≤ %.0f ms, TPOT/ITL p99 ≤ %.0f ms)%s\n",
		len(res.Endpoints), res.WatchedS, res.SLOTTFTms, res.SLOITLms, badge)
	for _, e := range res.Endpoints {
		line := fmt.Sprintf("  %s  %s %s  %s", e.URL, orDash(string(e.Engine)), e.Version, statusWord(e.Status, e.Health))
		if e.Error != "" {
			line += "  error: " + e.Error
		}
		fmt.Fprintln(out, strings.TrimRight(line, " "))
		if e.Hint != "" {
			fmt.Fprintln(out, "      hint: "+e.Hint)
		}
		if e.State != "" && e.State != model.LifeServing && e.State != model.LifeUnknown {
			fmt.Fprintln(out, "      state: "+joinNonEmpty(": ", string(e.State), e.StateDetail))
		}
		if n := len(e.Runs); n > 0 {
			r := e.Runs[n-1]
			if age := res.Time.Sub(r.Started); r.Ended == nil && n > 1 || age < youngRun && r.StartedBy != "first seen" {
				fmt.Fprintf(out, "      run %d started %s before the end of the watch (%s): its windows cover that run only\n", r.N, shortDur(age.Round(time.Second)), r.StartedBy)
			}
		}
	}
	fmt.Fprintln(out)
	if res.Status == "unreachable" {
		fmt.Fprintln(out, "No endpoint answered: only availability could be checked.")
		fmt.Fprintln(out)
	}
	switch {
	case len(res.Findings) == 0 && res.Status == "unreachable":
	case len(res.Findings) == 0:
		fmt.Fprintln(out, "No findings: all is well in what was checked.")
	default:
		fmt.Fprintf(out, "%d finding(s), most severe first:\n\n", len(res.Findings))
		for i, f := range res.Findings {
			printFinding(out, i+1, f)
		}
	}
	if len(res.Closed) > 0 {
		fmt.Fprintln(out, "Opened and cleared again during the watch:")
		for _, f := range res.Closed {
			fmt.Fprintf(out, "  %s %s  %s (%s–%s)\n", f.Severity.Tag(), f.ID, f.Title, f.Opened.Format("15:04:05"), f.Closed.Format("15:04:05"))
		}
		fmt.Fprintln(out)
	}
	if len(res.Checked) > 0 {
		fmt.Fprintln(out, "Checked: "+strings.Join(res.Checked, "; ")+".")
	}
	if len(res.Missing) > 0 {
		fmt.Fprintln(out, "Not checked, input missing:")
		for _, m := range res.Missing {
			fmt.Fprintln(out, "  - "+m)
		}
	}
}

// statusWord is the core's word for an endpoint, the screen's badge
// (DEGRADED for a llama-server without --metrics, whose health route says
// up), and the health route's when the core gave none (an older
// recording).
func statusWord(status string, health model.Health) string {
	if status != "" {
		return status
	}
	return string(health)
}

// youngRun: a run this young at the end of a watch is worth naming (its
// windows are short, and warm-up may still show).
const youngRun = time.Minute

func printFinding(out io.Writer, n int, f diagnosis.Finding) {
	where := ""
	if f.Endpoint != "" {
		where = "  [" + f.Endpoint + "]"
	}
	fmt.Fprintf(out, "%d. %s  %s  %s%s\n", n, f.Severity.Tag(), f.Title, f.ID, where)
	for _, e := range f.Evidence {
		src := e.Source
		if e.Window > 0 {
			src += ", " + shortDur(e.Window)
		}
		if src == "" {
			fmt.Fprintf(out, "   · %s\n", e.Text) // derived from the lines above: no "()"
			continue
		}
		fmt.Fprintf(out, "   · %s  (%s)\n", e.Text, src)
	}
	fmt.Fprintln(out, "   cause: "+f.Cause)
	for i, a := range f.Actions {
		fmt.Fprintf(out, "   try %d: %s\n          why: %s; trade-off: %s\n", i+1, a.Change, a.Why, a.TradeOff)
	}
	fmt.Fprintln(out)
}

func shortDur(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return d.Round(time.Second).String()
}

func orDash(s string) string {
	if s == "" {
		return "--"
	}
	return s
}
