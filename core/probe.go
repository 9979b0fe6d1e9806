package core

import "github.com/llmtop/llmtop/model"

// applyBehaviour files a behaviour probe's result under the run it probed
// (the run current at its time), without its raw exchanges (the face that
// ran it keeps those). The rules judge the current run's newest probe; a
// run's fingerprints are compared with the run before's (CompareRuns).
func (m *Monitor) applyBehaviour(b model.Behaviour) {
	e := m.eps[b.Endpoint]
	if e == nil {
		return
	}
	b = model.CleanBehaviour(b)
	b.Raw = nil
	for i := len(e.Runs) - 1; i >= 0; i-- {
		r := &e.Runs[i]
		if !b.Time.Before(r.Started) && (r.Ended == nil || !b.Time.After(*r.Ended)) {
			r.Behaviour = &b
			m.advance(b.Time)
			m.ver.Store++
			return
		}
	}
}
