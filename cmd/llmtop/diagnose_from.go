package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/tui"
)

// `llmtop diagnose --from FILE`: judge a recording offline, with the exit
// status a live diagnose would give.

func diagnoseFrom(cmd *cobra.Command, path string, urls []string) error {
	if recordFlags.path != "" {
		return fmt.Errorf("diagnose --from judges a recording: it records nothing (drop --record %s)", recordFlags.path)
	}
	if len(urls) > 0 {
		return fmt.Errorf("diagnose --from reads its endpoints from the recording: drop %s", strings.Join(urls, " "))
	}
	h, recs, notes, err := readRecording(path, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	res := judgeRecording(h, recs)
	res.Recording, res.Notes = path, notes
	return reportDiagnosis(safeOut(cmd.OutOrStdout()), res)
}

// judgeRecording replays a recording into a fresh core the way its face
// drove the live one. A diagnose recording runs its watch again: the same
// messages, the same evaluations at the same times, the same window since
// the watch began, so it reaches the live verdict. A monitor recording
// runs as the monitor did (its window and rules, the clock once a second):
// the findings open at its end are the verdict, those that opened and
// closed during it are listed as closed.
func judgeRecording(h recording.Header, recs []recording.Record) diagnoseResult {
	cfg := tui.DiagnosisConfig(tui.DefaultThresholds)
	if h.Diagnosis != nil {
		cfg = *h.Diagnosis
	}
	w := newWatch(h.Endpoints, cfg)
	w.start = h.Started
	last := lastTime(recs)
	if h.Face != "diagnose" {
		w.mon = monitorCore(h)
		for _, r := range recs {
			feedMonitor(w.mon, r)
		}
		return w.result(w.mon.Evaluate(last))
	}
	var rep diagnosis.Report
	evaluated := false
	for _, r := range recs {
		switch m := r.Msg.(type) {
		case recording.Tick:
			rep, evaluated = w.evaluate(r.Time), true
		case recording.Bench:
			b := m.Bench
			w.mon.SetBench(&b, m.Run)
		case recording.Scenario, recording.Note:
		case model.Scrape:
			w.onScrape(m)
			evaluated = false
		default:
			w.apply(m)
			evaluated = false
		}
	}
	if !evaluated { // cut before the watch's last evaluation
		rep = w.evaluate(last)
	}
	return w.result(rep)
}
