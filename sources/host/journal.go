package host

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
)

// kernelLog reads the kernel log from /dev/kmsg and, where that is not
// readable (it needs root or CAP_SYSLOG), from `journalctl -k`, which a
// member of the adm or systemd-journal group may read. The first reader
// that works is kept; when neither does, the error says why for both.
func kernelLog(kmsg func() ([]string, error), journal func() ([]string, error)) func() ([]string, error) {
	var use func() ([]string, error)
	var kmsgErr error
	return func() ([]string, error) {
		if use != nil {
			recs, err := use()
			if err != nil && kmsgErr != nil {
				err = errors.New(kmsgErr.Error() + "; journalctl -k: " + err.Error())
			}
			return recs, err
		}
		recs, err := kmsg()
		if err == nil {
			use = kmsg
			return recs, nil
		}
		if kmsgErr == nil {
			kmsgErr = err
		}
		if journal == nil {
			return nil, kmsgErr
		}
		recs, jerr := journal()
		if jerr != nil {
			return nil, errors.New(kmsgErr.Error() + "; journalctl -k: " + jerr.Error())
		}
		use = journal
		return recs, nil
	}
}

// journalCmd follows the kernel's messages from now on, one plain line
// each (the message alone: parseKmsg reads it as it reads dmesg's).
var journalCmd = []string{"journalctl", "-k", "-f", "-n", "0", "-q", "--no-pager", "-o", "cat"}

// maxJournalLines bounds what waits between two reads.
const maxJournalLines = 4096

// journalFollower starts argv on its first call and returns, on each call,
// the lines it printed since the previous one. It fails when the command
// cannot start, exits, or says it cannot show the system's messages (a
// user outside the journal's groups sees only their own).
func journalFollower(argv []string) func() ([]string, error) {
	var (
		mu      sync.Mutex
		started bool
		lines   []string
		failed  error
	)
	fail := func(err error) {
		mu.Lock()
		if failed == nil {
			failed = err
		}
		mu.Unlock()
	}
	start := func() {
		cmd := exec.Command(argv[0], argv[1:]...)
		setDeathSignal(cmd)
		out, err := cmd.StdoutPipe()
		if err != nil {
			fail(err)
			return
		}
		var stderr bytes.Buffer
		errPipe, err := cmd.StderrPipe()
		if err != nil {
			fail(err)
			return
		}
		if err := cmd.Start(); err != nil {
			fail(err)
			return
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(errPipe)
			for sc.Scan() {
				l := sc.Text()
				if stderr.Len() < 4096 {
					stderr.WriteString(l + "\n")
				}
				if strings.Contains(l, "not seeing messages from other users and the system") || strings.Contains(l, "insufficient permissions") {
					fail(errors.New("the journal shows this user only their own messages (join the adm or systemd-journal group)"))
				}
			}
		}()
		go func() {
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 16<<10), 1<<20)
			for sc.Scan() {
				mu.Lock()
				if len(lines) < maxJournalLines {
					lines = append(lines, sc.Text())
				}
				mu.Unlock()
			}
			_, _ = io.Copy(io.Discard, out)
			wg.Wait()
			err := cmd.Wait()
			msg := strings.TrimSpace(stderr.String())
			switch {
			case msg != "":
				fail(errors.New(firstLine(msg)))
			case err != nil:
				fail(err)
			default:
				fail(errors.New("it stopped"))
			}
		}()
	}
	return func() ([]string, error) {
		mu.Lock()
		if !started {
			started = true
			mu.Unlock()
			start()
			mu.Lock()
		}
		defer mu.Unlock()
		if failed != nil {
			return nil, failed
		}
		out := lines
		lines = nil
		return out, nil
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
