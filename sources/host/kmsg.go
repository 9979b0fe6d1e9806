package host

import (
	"regexp"
	"strconv"
	"strings"
)

// killedRe is the kernel OOM killer's verdict (mm/oom_kill.c,
// __oom_kill_process: "%s: Killed process %d (%s) total-vm:%lukB, …", the
// prefix "Out of memory" or "Memory cgroup out of memory").
var killedRe = regexp.MustCompile(`(Out of memory|Memory cgroup out of memory): Killed process (\d+) \((.*?)\)`)

// oomKill is one OOM-killer line about a process.
type oomKill struct {
	pid    int
	comm   string
	cgroup bool // the engine's cgroup limit, not the host's memory
	line   string
}

// parseKmsg reads one /dev/kmsg record ("6,1234,5678901,-;message") or a
// plain dmesg / journalctl -k line, and returns the OOM kill it reports.
func parseKmsg(rec string) (oomKill, bool) {
	msg := rec
	if i := strings.IndexByte(rec, ';'); i >= 0 && strings.Count(rec[:i], ",") >= 2 {
		msg = rec[i+1:]
	}
	msg = strings.TrimRight(msg, "\n")
	m := killedRe.FindStringSubmatch(msg)
	if m == nil {
		return oomKill{}, false
	}
	pid, err := strconv.Atoi(m[2])
	if err != nil {
		return oomKill{}, false
	}
	return oomKill{pid: pid, comm: m[3], cgroup: strings.HasPrefix(m[1], "Memory cgroup"), line: msg}, true
}
