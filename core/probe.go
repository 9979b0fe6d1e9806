package core

import (
	"strings"

	"github.com/llmtop/llmtop/model"
)

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
			if len(b.Stop.Defaults) == 0 {
				m.loggedDefaults(e, *r, &b)
			}
			r.Behaviour = &b
			m.advance(b.Time)
			m.ver.Store++
			return
		}
	}
}

// sampleDefaultsLine is how vLLM and SGLang log the sampling defaults they
// take from the model's generation_config.json (vLLM serving_chat.py:
// "Using default chat sampling params from model: {'temperature': 0.6,
// 'top_p': 0.9}"; SGLang: "… from model generation config: {…}"). Neither
// serves them over HTTP, so the probe fills them from the attached log.
const sampleDefaultsLine = "Using default chat sampling params from "

// loggedDefaults fills b's generation defaults from the run's start-up
// log line, when this endpoint's log is attached and printed one.
func (m *Monitor) loggedDefaults(e *Endpoint, r model.Run, b *model.Behaviour) {
	if !m.logFor(e) {
		return
	}
	for i := m.logs.Len() - 1; i >= 0; i-- {
		l := m.logs.At(i)
		if l.Time.Before(r.Started.Add(-crashSpan)) {
			return // the start-up lines come a little before the first scrape sees the run
		}
		j := strings.Index(l.Text, sampleDefaultsLine)
		if j < 0 {
			continue
		}
		src, dict, ok := strings.Cut(l.Text[j+len(sampleDefaultsLine):], ": {")
		if !ok {
			continue
		}
		b.Stop.Defaults = parseArgs("{" + dict)
		b.Stop.DefaultsFrom = "the engine's log: " + sampleDefaultsLine + src
		b.Identity.GenConfigHash = model.GenConfigDigest(b.Stop.Defaults, b.Stop.StopTokens)
		return
	}
}
