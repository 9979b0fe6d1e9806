package host

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The kernel's OOM line as journalctl -k -o cat prints it (the message
// alone), from the real line TestParseKmsgRealLines holds.
const journalOOM = "Out of memory: Killed process 200 (VLLM::EngineCor) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0"

// shJournal stands in for journalctl: a shell that prints what it is given
// and stays up a while, as journalctl -f does.
func shJournal(t *testing.T, script string) []string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	return []string{"sh", "-c", script}
}

// drain calls read until it returns lines or an error, or a few seconds
// pass (the follower reads in the background).
func drain(read func() ([]string, error)) ([]string, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		recs, err := read()
		if len(recs) > 0 || err != nil || time.Now().After(deadline) {
			return recs, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var errKmsg = errors.New("/dev/kmsg: permission denied (it needs root or CAP_SYSLOG; kernel.dmesg_restrict)")

// Issue 27: where /dev/kmsg is not readable, the kernel's OOM kills come
// from journalctl -k, and the run ends as killed by the OOM killer.
func TestJournalWhenKmsgIsNotReadable(t *testing.T) {
	argv := shJournal(t, "printf '%s\\n' '"+journalOOM+"'; sleep 3")
	read := kernelLog(func() ([]string, error) { return nil, errKmsg }, journalFollower(argv))
	recs, err := drain(read)
	if err != nil || len(recs) != 1 || recs[0] != journalOOM {
		t.Fatalf("%q %v", recs, err)
	}
	k, ok := parseKmsg(recs[0])
	if !ok || k.pid != 200 || k.comm != "VLLM::EngineCor" {
		t.Errorf("%+v %v", k, ok)
	}
	// Later reads keep to the journal.
	if recs, err := read(); err != nil || len(recs) != 0 {
		t.Errorf("second read %q %v", recs, err)
	}
}

func TestKmsgFirst(t *testing.T) {
	journalAsked := false
	read := kernelLog(func() ([]string, error) { return []string{"6,1,1,-;x"}, nil }, func() ([]string, error) { journalAsked = true; return nil, nil })
	if recs, err := read(); err != nil || len(recs) != 1 || journalAsked {
		t.Errorf("%q %v journal asked %v", recs, err, journalAsked)
	}
}

// Neither readable: the reading says why for both.
func TestNeitherKernelLogReadable(t *testing.T) {
	cases := map[string]struct {
		argv []string
		want string
	}{
		"no journalctl": {[]string{"/nonexistent/journalctl", "-k"}, "no such file"},
		"a user outside the journal's groups": {shJournal(t, "echo 'Hint: You are currently not seeing messages from other users and the system.' >&2; sleep 3"),
			"join the adm or systemd-journal group"},
		"journalctl fails": {shJournal(t, "echo 'Failed to open journal: no such directory' >&2; exit 1"), "Failed to open journal"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			read := kernelLog(func() ([]string, error) { return nil, errKmsg }, journalFollower(c.argv))
			_, err := drain(read)
			if err == nil || !strings.Contains(err.Error(), "/dev/kmsg: permission denied") || !strings.Contains(err.Error(), "journalctl -k: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v", err)
			}
		})
	}
}
