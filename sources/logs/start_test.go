package logs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/logs/logstest"
)

// TestStartDoneMeansTheCommandIsGone: once ctx ends, the channel Start
// returns closes only when the command's whole process group is gone,
// also for a command that ignores SIGTERM (SIGKILL after the 2 s grace),
// and not much later than that.
func TestStartDoneMeansTheCommandIsGone(t *testing.T) {
	for _, tc := range []struct{ name, marker, prefix string }{
		{"exits on SIGTERM", "sleep 987654", ""},
		{"ignores SIGTERM", "sleep 987655", "trap '' TERM; "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p := logstest.Running(t, tc.marker); len(p) > 0 {
				t.Skipf("%q already runs here: %q", tc.marker, p)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := &collector{}
			done := Start(ctx, Input{Command: tc.prefix + tc.marker}, unlimited, c.send)
			waitFor(t, "the command to start", func() bool {
				return slices.ContainsFunc(logstest.Running(t, tc.marker), func(p string) bool { return strings.HasSuffix(p, ": "+tc.marker) })
			})
			select {
			case <-done:
				t.Fatal("done closed while ctx is live")
			default:
			}
			start := time.Now()
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("done did not close 10 s after cancel")
			}
			if took := time.Since(start); took > 3500*time.Millisecond {
				t.Errorf("done closed %s after cancel; want within the 2 s grace and a little", took)
			}
			if p := logstest.Running(t, tc.marker); len(p) > 0 {
				t.Errorf("done closed but the command still runs: %q", p)
				for _, p := range p { // leave nothing behind
					if pid, err := strconv.Atoi(p[:strings.IndexByte(p, ':')]); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
		})
	}
}

// TestStartDoneForFileAndReader: the channel closes for the other inputs too.
func TestStartDoneForFileAndReader(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	defer pr.Close()
	for _, in := range []Input{
		{File: filepath.Join(t.TempDir(), "engine.log")},
		{Reader: pr, Name: "a pipe that never ends"},
		{},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		done := Start(ctx, in, unlimited, (&collector{}).send)
		time.Sleep(20 * time.Millisecond)
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("%+v: done did not close after cancel", in)
		}
	}
}
