package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// The monitor runs on one processor; a benchmark gets them all back while
// it runs (two at once: until the last ends); quitting restores them.
func TestMonitorProcsAndBenchmarks(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	full := runtime.GOMAXPROCS(0)
	if full < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(full)
		full = 2
	}
	var p procs
	p.narrow()
	defer p.restore()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("the monitor runs on %d processors, want 1", n)
	}
	p.benchStart()
	p.benchStart()
	if n := runtime.GOMAXPROCS(0); n != full {
		t.Fatalf("during a benchmark: %d processors, want %d", n, full)
	}
	p.benchEnd()
	if n := runtime.GOMAXPROCS(0); n != full {
		t.Fatalf("one of two benchmarks ended: %d processors, want %d", n, full)
	}
	p.benchEnd()
	p.benchEnd() // an extra end changes nothing
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("after the benchmarks: %d processors, want 1", n)
	}
	p.restore()
	if n := runtime.GOMAXPROCS(0); n != full {
		t.Fatalf("after the monitor: %d processors, want %d", n, full)
	}
}

// A GOMAXPROCS the user set is theirs.
func TestMonitorProcsLeavesTheUsersSetting(t *testing.T) {
	t.Setenv("GOMAXPROCS", "3")
	before := runtime.GOMAXPROCS(0)
	var p procs
	p.narrow()
	p.benchStart()
	p.benchEnd()
	if n := runtime.GOMAXPROCS(0); n != before {
		t.Fatalf("GOMAXPROCS set by the user: %d processors, want %d", n, before)
	}
	p.restore()
}

// The monitor collects garbage at GOGC=150 (a GOGC the user set stays) and
// gives the old setting back when it ends.
func TestMonitorGCPercent(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	var p procs
	p.narrow()
	if got := debug.SetGCPercent(monitorGOGC); got != monitorGOGC {
		t.Errorf("the monitor's GC percent is %d, want %d", got, monitorGOGC)
	}
	p.restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after the monitor the GC percent is %d, want 100", got)
	}
	t.Setenv("GOGC", "50")
	p.narrow()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the monitor changed the GC percent to %d", got)
	}
	p.restore()
}
