package core

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// The kernel's OOM kill of the engine, read after the guess "killed?":
// the run ends "killed by the kernel OOM killer" with the kernel's line,
// and the finding is critical.
func TestKernelOOMKillEndsTheRun(t *testing.T) {
	m := killedWithLog()
	if r := m.Endpoint(url).Current(); !r.EndGuessed {
		t.Fatalf("before the kernel's word: %+v", r)
	}
	line := "Out of memory: Killed process 4790 (VLLM::EngineCor) total-vm:90000000kB, anon-rss:60000000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:120000kB oom_score_adj:0"
	m.Apply(model.Event{Time: at(40), Endpoint: url, Source: "kernel", Kind: model.KindOOMKilled, Severity: model.SevCrit,
		Category: model.CategoryLifecycle, Title: "killed by the kernel OOM killer", Line: line,
		Fields: map[string]string{"phase": model.PhaseCrash, "pid": "4790", "process": "VLLM::EngineCor"}})
	// The host source goes on reading the endpoint (nothing holds its port now).
	m.Apply(model.HostReading{Endpoint: url, Time: at(40), NotChecked: []string{"engine processes: not checked, because no process visible to llmtop holds the endpoint's port"}})
	m.Tick(at(41))
	r := m.Endpoint(url).Current()
	if r.End != model.RunCrash || r.EndGuessed || r.EndReason != "killed by the kernel OOM killer" || r.EndLine != line || !r.Ended.Equal(at(21)) {
		t.Fatalf("run = %+v", r)
	}
	if ids := findingIDs(m.Report().Findings); !strings.Contains(ids, "kernel_oom_kill:crit") {
		t.Fatalf("findings %s", ids)
	}
}

// Host readings over 40 minutes whose API server's RSS climbs: the core
// keeps one point per 30 s per process and the leak rule sees the slope;
// a process that disappears takes its trend with it.
func TestHostTrendFeedsTheLeakRule(t *testing.T) {
	m := newMonitor()
	e := newEngine("0.11.0", time.Time{}, 0.02)
	for s := 0.0; s <= 40*60; s += 5 {
		m.Apply(e.scrape(at(s), 5, 100))
		m.Apply(model.HostReading{Endpoint: url, Time: at(s), IntervalS: 5, Procs: []model.ProcUsage{
			{PID: 4711, Name: "vllm", Front: true, RSS: model.Some(4<<30 + s*(1<<20)), Threads: 60},
			{PID: 4790, PPID: 4711, Name: "VLLM::EngineCor", RSS: model.Some(6 << 30), Threads: 40}}})
	}
	// The snapshot carries the newest reading.
	if doc := m.Snapshot(); len(doc.Endpoints) == 0 || doc.Endpoints[0].Host == nil || doc.Endpoints[0].Host.Procs[0].PID != 4711 {
		t.Fatalf("snapshot host: %+v", doc.Endpoints)
	}
	tr := m.Endpoint(url).trend
	if len(tr) != 2 || len(tr[4711].RSS) != 81 {
		t.Fatalf("trend %d processes, %d points", len(tr), len(tr[4711].RSS))
	}
	m.Tick(at(40*60 + 1))
	ids := findingIDs(m.Report().Findings)
	if !strings.Contains(ids, "memory_leak") {
		t.Fatalf("findings %s", ids)
	}
	m.Apply(model.HostReading{Endpoint: url, Time: at(40*60 + 30), Procs: []model.ProcUsage{{PID: 5000, Front: true}}})
	if _, ok := m.Endpoint(url).trend[4711]; ok || len(m.Endpoint(url).trend) != 1 {
		t.Fatalf("gone processes kept: %v", m.Endpoint(url).trend)
	}
}
