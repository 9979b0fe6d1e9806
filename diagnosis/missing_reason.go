package diagnosis

import "strings"

// MissingReasons are the codes MissingReason gives, each with what it
// means: a small fixed set, so a label made of them stays bounded (the
// exporter's llmtop_check_missing{reason}) whatever the lines say.
var MissingReasons = []struct{ Code, Means string }{
	{"no_metrics", "no endpoint returned /metrics"},
	{"no_gpu", "no GPU reading (no NVML driver, --no-gpu, or NVML not readable here)"},
	{"no_log", "the engine's log is not attached"},
	{"no_bench", "no benchmark run yet"},
	{"no_replicas", "too few replicas serve the same model to compare them"},
	{"no_host", "the host's readings (/proc, cgroups, file systems) are not read or not readable"},
	{"no_router", "no router or proxy in front is watched, or its word is missing or too old"},
	{"not_watched", "a router names backends llmtop does not watch"},
	{"no_health", "no health route answered"},
	{"not_exposed", "the engine does not expose the metric"},
	{"scrape_failed", "the newest scrape failed"},
	{"too_little_data", "too little traffic or data in the window (or run) to judge"},
	{"unknown_config", "a fact of the engine's configuration is not known"},
	{"not_applicable", "the check does not apply to how this engine runs"},
	{"probe", "the behaviour probe could not judge it"},
	{"other", "none of the above"},
}

// missingPatterns tell a lack line's code by what the rules write in it,
// first match wins. The needs' lines (needNames) are told by their text
// exactly before these are tried.
var missingPatterns = []struct{ sub, code string }{
	{"behaviour probe: ", "probe"},
	{"so they are not compared", "no_replicas"},
	{"the newest scrape failed", "scrape_failed"},
	{"never answered since llmtop started", "scrape_failed"},
	{"only a mean is known", "not_exposed"},
	{"does not expose it", "not_exposed"},
	{"not exposed", "not_exposed"},
	{"serves no ", "not_exposed"},
	{" exposed)", "not_exposed"},
	{"no health route answered", "no_health"},
	{": not checked, because", "no_host"},
	{"llmtop does not watch it", "not_watched"},
	{" behind it are watched", "not_watched"},
	{"too few requests", "too_little_data"},
	{"counted no request", "too_little_data"},
	{"replica(s) with a number", "no_replicas"},
	{"router", "no_router"},
	{"is not known", "unknown_config"},
	{"is unknown", "unknown_config"},
	{"nor the GPU's", "unknown_config"},
	{"NVML", "no_gpu"},
	{"no GPU reading", "no_gpu"},
	{"in the window", "too_little_data"},
	{"no rate yet", "too_little_data"},
	{"in this run", "too_little_data"},
	{"no run before this one", "too_little_data"},
	{"not the same load", "too_little_data"},
	{"similar load", "too_little_data"},
	{"must serve", "too_little_data"},
	{"was not measured", "too_little_data"},
	{"runs the model in the process", "not_applicable"},
}

// MissingReason is the code (MissingReasons) of one of a report's Missing
// lines: why the input of a check was missing, with no endpoint, path or
// outside text in it; "other" for a line no pattern tells.
func MissingReason(line string) string {
	for _, nn := range needNames {
		if line == nn.name {
			return nn.code
		}
	}
	for _, p := range missingPatterns {
		if strings.Contains(line, p.sub) {
			return p.code
		}
	}
	return "other"
}
