package diagnosis

import (
	"strconv"
	"strings"
)

// Version-dependent advice reads the engine's reported version here; the
// table of what changed where, with its source, is in docs/diagnosis.md
// ("Version-aware advice").

// semver parses the leading major.minor of a version ("0.11.0",
// "v0.8.5.post1", "0.10.1rc2+cu128"); ok is false when it does not start
// with one.
func semver(v string) (major, minor int, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	digits := func(s string) (int, bool) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		n, err := strconv.Atoi(s[:i])
		return n, err == nil
	}
	major, ok1 := digits(parts[0])
	minor, ok2 := digits(parts[1])
	return major, minor, ok1 && ok2
}

// atLeast reports whether version v is major.minor or newer; known is false
// when v does not parse.
func atLeast(v string, major, minor int) (yes, known bool) {
	a, b, ok := semver(v)
	if !ok {
		return false, false
	}
	return a > major || (a == major && b >= minor), true
}

// vllmV1 reports whether a vLLM endpoint runs the V1 engine: the default
// from v0.8.0, the only engine from v0.11.0 (V0 removed). An unknown
// version is taken as V1: every current release is.
func vllmV1(ep Endpoint) bool {
	yes, known := atLeast(version(ep), 0, 8)
	return yes || !known
}

// version is the engine's version: what it reports, else what its log
// said when the current run started (an engine that is down, or a V0 that
// serves no version route).
func version(ep Endpoint) string {
	if ep.Identity.Version != "" {
		return ep.Identity.Version
	}
	if n := len(ep.Runs); n > 0 {
		return ep.Runs[n-1].Version
	}
	return ""
}

// served is a setting of the current run's configuration (its log's args
// line, args.KEY) or the engine's config info (KEY); ok is false when
// neither says. A V0 Namespace's None is no setting.
func served(ep Endpoint, key string) (string, bool) {
	if n := len(ep.Runs); n > 0 {
		if v, ok := ep.Runs[n-1].Config["args."+key]; ok && v != "" && v != "None" {
			return v, true
		}
	}
	if v, ok := ep.State.Info[key]; ok && v != "" && v != "None" {
		return v, true
	}
	return "", false
}
