package logs

import (
	"regexp"
	"strings"
	"time"
)

// Timestamp prefixes llmtop understands, tried in order on the start of a
// sanitized line. A zone-less stamp is read in the clock's location.
var (
	// docker/kubectl --timestamps, TGI tracing, Ollama slog (time=…).
	reRFC3339 = regexp.MustCompile(`^(?:time=)?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)\s`)
	// SGLang "[2026-08-22 10:00:00 TP0]", Go log "2026/08/22 10:00:00", Python default asctime "2026-08-22 10:00:00,123".
	reISOSpace = regexp.MustCompile(`^\[?(\d{4})[-/](\d\d)[-/](\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?[\s\]]`)
	// vLLM "INFO 08-14 12:00:01 [loggers.py:259]", optionally after "(EngineCore_DP0 pid=456) ".
	reVLLM = regexp.MustCompile(`^(?:\([\w.-]+ pid=\d+\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))? `)
	// Ollama's gin access log "[GIN] 2026/08/21 - 10:00:00 | 200 | …".
	reGIN = regexp.MustCompile(`^\[GIN\] (\d{4})/(\d\d)/(\d\d) - (\d\d):(\d\d):(\d\d) `)
	// journalctl's default short format "Nov 22 04:50:01 host unit[123]: ".
	reSyslog = regexp.MustCompile(`^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) `)
)

var months = map[string]time.Month{
	"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6,
	"Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12,
}

// stampTime returns the time a line was logged: the engine's own
// timestamp prefix when there is a plausible one, else the arrival time;
// stamped says the line had one. A stamp more than two minutes in the
// future is a clock or time-zone mismatch (a container logging UTC on a
// host in another zone) and is not trusted. A whole-second stamp is
// refined with the arrival time when the line arrived within that second,
// so live samples stay ordered.
func stampTime(line string, arrival time.Time, loc *time.Location) (time.Time, bool) {
	t, whole, ok := parseStamp(line, arrival, loc)
	if !ok || t.After(arrival.Add(2*time.Minute)) {
		return arrival, false
	}
	if whole && !arrival.Before(t) && arrival.Sub(t) < 2*time.Second {
		return arrival, true
	}
	return t, true
}

// liveLag is how far behind its arrival a live line's own stamp may be
// and still be read in the zone it was parsed in: a line is read within a
// second of being written, and zones differ by a quarter hour at least.
const liveLag = 2 * time.Minute

// stampZoned says the line's stamp names its zone (RFC 3339 with Z or an
// offset); the other stamps are read in a zone llmtop must be told.
func stampZoned(line string) bool {
	if line == "" || !(line[0] >= '0' && line[0] <= '9' || line[0] == 't') {
		return false
	}
	m := reRFC3339.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	s := m[1]
	return strings.HasSuffix(s, "Z") || len(s) > 19 && strings.ContainsAny(s[19:], "+-")
}

// reCommandStamp is the stamp docker and kubectl logs --timestamps put in
// front of each line: RFC 3339 with nanoseconds and a zone.
var reCommandStamp = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) ?`)

// cutStamp reads and cuts the command's own stamp; a line without one
// (a command that is not what was expected) is left as it is.
func cutStamp(line string) (time.Time, string, bool) {
	m := reCommandStamp.FindStringSubmatchIndex(line)
	if m == nil {
		return time.Time{}, line, false
	}
	t, err := time.Parse(time.RFC3339Nano, line[m[2]:m[3]])
	if err != nil {
		return time.Time{}, line, false
	}
	return t, line[m[1]:], true
}

// parseStamp reads a timestamp prefix; whole says it has no sub-second part.
func parseStamp(line string, now time.Time, loc *time.Location) (t time.Time, whole, ok bool) {
	if len(line) < 15 {
		return time.Time{}, false, false
	}
	switch c := line[0]; {
	case c >= '0' && c <= '9' || c == 't' || c == '[':
		if m := reGIN.FindStringSubmatch(line); m != nil {
			return build(atoi(m[1]), time.Month(atoi(m[2])), append(m[3:], ""), loc)
		}
		if m := reRFC3339.FindStringSubmatch(line); m != nil {
			return parseRFC3339(m[1], loc)
		}
		if m := reISOSpace.FindStringSubmatch(line); m != nil {
			return build(atoi(m[1]), time.Month(atoi(m[2])), m[3:], loc)
		}
	case c == '(' || c >= 'A' && c <= 'Z':
		if m := reVLLM.FindStringSubmatch(line); m != nil {
			return withYear(now, time.Month(atoi(m[1])), m[2:], loc)
		}
		if m := reSyslog.FindStringSubmatch(line); m != nil {
			mon, known := months[m[1]]
			if !known {
				return time.Time{}, false, false
			}
			return withYear(now, mon, append(m[2:], ""), loc)
		}
	}
	return time.Time{}, false, false
}

// parseRFC3339 reads an ISO 8601 stamp with or without a zone.
func parseRFC3339(s string, loc *time.Location) (time.Time, bool, bool) {
	whole := !strings.Contains(s, ".")
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, whole, true
		}
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, loc)
	return t, whole, err == nil
}

// build makes a time from day, hour, minute, second and fraction strings.
func build(year int, mon time.Month, f []string, loc *time.Location) (time.Time, bool, bool) {
	if mon < 1 || mon > 12 {
		return time.Time{}, false, false
	}
	ns := 0
	if frac := f[4]; frac != "" {
		ns = atoi((frac + "000000000")[:9])
	}
	t := time.Date(year, mon, atoi(f[0]), atoi(f[1]), atoi(f[2]), atoi(f[3]), ns, loc)
	return t, f[4] == "", true
}

// withYear completes a year-less stamp: the current year, or the previous
// one when that would put the line more than a day in the future (a log
// from late December read in January).
func withYear(now time.Time, mon time.Month, f []string, loc *time.Location) (time.Time, bool, bool) {
	t, whole, ok := build(now.In(loc).Year(), mon, f, loc)
	if ok && t.After(now.Add(24*time.Hour)) {
		t = t.AddDate(-1, 0, 0)
	}
	return t, whole, ok
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
