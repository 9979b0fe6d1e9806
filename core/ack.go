package core

import (
	"fmt"
	"slices"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
)

// A person can acknowledge a finding they know about (a planned redeploy)
// or silence a rule for a while. Neither hides anything: the finding stays
// in the report, marked, ranked after the others, so the screen's top line
// leads with what nobody has seen yet. Acknowledgements last for the
// endpoint's current run (a new run clears them); one of a finding about no
// one endpoint (a GPU's, the fleet's), which has no run, lasts while that
// finding stays open: when it opens again it is news. Silences last until
// their time.

// ackKey is an acknowledged finding: its Subject (its endpoint, or its
// pool: a pool's finding moves between the pool's workers) and its ID.
type ackKey struct{ endpoint, id string }

// Ack acknowledges the open finding id at endpoint ("" for findings about
// no one endpoint) for the endpoint's current run; a pool's finding, for
// as long as it stays open, wherever it moves in the pool. It errs when no
// such finding is open.
func (m *Monitor) Ack(endpoint, findingID string) error {
	f, ok := m.openAt(endpoint, findingID)
	if !ok {
		return fmt.Errorf("no open finding %q at %q to acknowledge", findingID, endpoint)
	}
	if m.acks == nil {
		m.acks = map[ackKey]bool{}
	}
	m.acks[ackKey{f.Subject(), findingID}] = true
	m.annotate()
	return nil
}

// Unack takes an acknowledgement back.
func (m *Monitor) Unack(endpoint, findingID string) {
	subject := endpoint
	if f, ok := m.openAt(endpoint, findingID); ok {
		subject = f.Subject()
	}
	delete(m.acks, ackKey{subject, findingID})
	m.annotate()
}

// Silence ranks the findings of rule ruleID last until until (a zero or
// past time lifts the silence).
func (m *Monitor) Silence(ruleID string, until time.Time) {
	if m.silences == nil {
		m.silences = map[string]time.Time{}
	}
	if !until.After(m.now) {
		delete(m.silences, ruleID)
	} else {
		m.silences[ruleID] = until
	}
	m.annotate()
}

// Silences are the rules silenced now, with until when.
func (m *Monitor) Silences() map[string]time.Time {
	out := map[string]time.Time{}
	for id, t := range m.silences {
		if t.After(m.now) {
			out[id] = t
		}
	}
	return out
}

// Acked says whether f is acknowledged or its rule silenced now.
func (m *Monitor) Acked(f diagnosis.Finding) bool {
	return m.acks[ackKey{f.Subject(), f.ID}] || m.silences[f.ID].After(m.now)
}

// openAt is the open finding id at endpoint.
func (m *Monitor) openAt(endpoint, id string) (diagnosis.Finding, bool) {
	for _, f := range m.ranked {
		if f.Endpoint == endpoint && f.ID == id {
			return f, true
		}
	}
	return diagnosis.Finding{}, false
}

// isOpen reports whether the finding id about subject (Finding.Subject)
// is open.
func (m *Monitor) isOpen(subject, id string) bool {
	for _, f := range m.ranked {
		if f.ID == id && f.Subject() == subject {
			return true
		}
	}
	return false
}

// clearAcks forgets the acknowledgements at url (a new run began there).
func (m *Monitor) clearAcks(url string) {
	for k := range m.acks {
		if k.endpoint == url {
			delete(m.acks, k)
		}
	}
}

// dropClosedAcks forgets the acknowledgements of findings about no one
// endpoint, or about a pool, that are no longer open.
func (m *Monitor) dropClosedAcks() {
	for k := range m.acks {
		if (k.endpoint == "" || m.eps[k.endpoint] == nil) && !m.isOpen(k.endpoint, k.id) {
			delete(m.acks, k)
		}
	}
}

// annotate marks the report's findings acked or silenced and ranks those
// last, keeping the rules' order otherwise. The report is copied: the
// diagnoser may hold its slice.
func (m *Monitor) annotate() {
	if len(m.ranked) == 0 {
		return
	}
	if len(m.acks) == 0 && !m.anySilenced() {
		// Nothing to mark or move: the rules' ranking as it is (a
		// fleet's thousands of findings are not copied each refresh).
		m.rep.Findings = m.ranked
		m.ver.Report++
		return
	}
	fs := slices.Clone(m.ranked)
	for i := range fs {
		fs[i].Acked = m.acks[ackKey{fs[i].Subject(), fs[i].ID}]
		fs[i].SilencedUntil = time.Time{}
		if t := m.silences[fs[i].ID]; t.After(m.now) {
			fs[i].SilencedUntil = t
		}
	}
	quiet := func(f diagnosis.Finding) bool { return f.Acked || !f.SilencedUntil.IsZero() }
	slices.SortStableFunc(fs, func(a, b diagnosis.Finding) int {
		qa, qb := quiet(a), quiet(b)
		switch {
		case qa == qb:
			return 0
		case qa:
			return 1
		}
		return -1
	})
	m.rep.Findings = fs
	m.ver.Report++
}

// anySilenced reports whether a rule is silenced now.
func (m *Monitor) anySilenced() bool {
	for _, t := range m.silences {
		if t.After(m.now) {
			return true
		}
	}
	return false
}
