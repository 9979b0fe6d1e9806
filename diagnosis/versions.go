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
	yes, known := atLeast(ep.Identity.Version, 0, 8)
	return yes || !known
}
