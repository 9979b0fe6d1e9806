package model

// EngineShare is one of several engines behind one server (vLLM data
// parallel: the engine="0", engine="1" series), as its own gauges. A
// fraction such as KV usage cannot be averaged over them: one engine at
// 99.9 % preempts while the mean reads 50 %.
type EngineShare struct {
	ID      string `json:"engine"`
	Running Opt    `json:"running"`
	Waiting Opt    `json:"waiting"`
	KVUsage Opt    `json:"kv_cache_usage_ratio"`
}

// Fullest returns the engine with the highest KV usage (ok false when none
// says).
func Fullest(es []EngineShare) (EngineShare, bool) {
	var best EngineShare
	ok := false
	for _, e := range es {
		if e.KVUsage.OK && (!ok || e.KVUsage.V > best.KVUsage.V) {
			best, ok = e, true
		}
	}
	return best, ok
}
