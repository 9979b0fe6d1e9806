package core

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Seen against a real llama-server: kill -9 under load, started again 14 s
// later with -np 4 -c 4096 (was -np 2 -c 8192), its log attached. Nothing
// said how run 1 ended (no shutdown line; down for less than the 15 s that
// make a silent log a kill), so the changed configuration made it planned,
// and the finding said "run 1 ended cleanly". The end is a guess: the run
// says so, and the finding names it a restart with a new configuration,
// how it ended not seen.
func TestConfigChangeAfterSilentEndIsAGuess(t *testing.T) {
	m := newMonitor()
	for _, l := range banner(at(0), "{'max_num_seqs': 256}") {
		m.Apply(l)
	}
	run(m, newEngine("0.11.0", at(0), 0.02), 1, 20, 5, 100)
	for s := 21.0; s < 30; s++ { // killed: down 9 s, the log silent
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	for _, l := range banner(at(30), "{'max_num_seqs': 128}") {
		m.Apply(l)
	}
	run(m, newEngine("0.11.0", at(30), 0.02), 31, 10, 5, 100)
	runs := m.RunsOf(url)
	if len(runs) != 2 || runs[0].End != model.RunPlanned || !runs[0].EndGuessed {
		t.Fatalf("runs %+v: want run 1 taken as planned, the end guessed", runs)
	}
	var f string
	for _, x := range m.Report().Findings {
		if x.ID == "restarts" {
			f = x.Title
			for _, ev := range x.Evidence {
				f += " | " + ev.Text
			}
		}
	}
	if f == "" || strings.Contains(f, "ended cleanly") || strings.HasPrefix(f, "planned restart") || !strings.Contains(f, "not seen") {
		t.Errorf("restart finding %q: want no 'ended cleanly' nor 'planned restart' for an end nobody saw", f)
	}
}
