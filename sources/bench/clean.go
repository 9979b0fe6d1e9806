package bench

import (
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// cleanResult makes a result safe to show and save, where it leaves the
// load generator: the base URL with its credentials redacted, and what the
// server wrote (its model id, error bodies, finish-reason labels) cleaned
// of terminal control sequences. The requests used the real URL.
func cleanResult(r report.Result) report.Result {
	r.BaseURL = model.RedactURL(r.BaseURL)
	r.ModelID = model.Clean(r.ModelID)
	r.Notes = redactAll(r.Notes)
	r.ErrorSamples = redactAll(r.ErrorSamples)
	r.FinishReasons = model.CleanMap(r.FinishReasons, nil)
	return r
}

// redactAll returns a cleaned, redacted copy of ss (nil stays nil).
func redactAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = model.RedactText(s)
	}
	return out
}
