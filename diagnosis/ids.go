package diagnosis

import "sort"

// subIDs are the finding ids a rule gives its findings besides its own
// (a TTFT rule says which phase dominates; the probe names each check),
// and those of the probe's answer comparisons (AnswerFindings).
// ids_test.go holds the list to the source: every id a rule assigns is
// here or a rule's own.
var subIDs = []string{
	"ttft_queueing", "ttft_prefill", "ttft_preemption",
	"itl_prefill_stall", "itl_decode_batch", "itl_bandwidth", "itl_loaded",
	"probe_template", "probe_nondeterministic", "probe_partial", "probe_repetition", "probe_route_mismatch", "probe_runs_to_length",
	"probe_reference_differs", "probe_golden_changed",
}

// FindingIDs lists every id a finding can carry, sorted: the rules', the
// log events' and the ids rules give their findings. Documentation that
// names a finding (docs/runbook.md) is tested against it.
func FindingIDs() []string {
	seen := map[string]bool{criticalEvent.id: true}
	for _, r := range rules {
		seen[r.id] = true
	}
	for _, r := range eventRules {
		seen[r.id] = true
	}
	for _, id := range subIDs {
		seen[id] = true
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
