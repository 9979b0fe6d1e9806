//go:build linux

package host

import (
	"os"
	"testing"
	"time"
)

// BenchmarkLookSelf is one host look (every 3 s in the monitor) at this
// test's own process on the real /proc, cgroup mount and file systems, as
// the monitor looks at an engine: the cost of a look in a steady run.
//
//	go test ./sources/host -run '^$' -bench LookSelf
func BenchmarkLookSelf(b *testing.B) {
	cfg := Default()
	cfg.Kmsg = nil // the kernel log is a follower, not a per-look read
	r := New(cfg)
	tg := []Target{{Endpoint: "e", PID: os.Getpid(), Logs: []string{os.Args[0]}}}
	now := time.Now()
	for range 3 { // past the tree's start-up walks
		now = now.Add(3 * time.Second)
		r.Read(now, tg)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		now = now.Add(3 * time.Second)
		hs, _ := r.Read(now, tg)
		if len(hs) != 1 || len(hs[0].Procs) == 0 {
			b.Fatalf("look: %+v", hs)
		}
	}
}
