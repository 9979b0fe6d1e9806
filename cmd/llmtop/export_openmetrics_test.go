package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/sources/gpu"
)

// promtool (Debian's prometheus package) loads the export of a recording
// of the simulator, with its GPU, into a TSDB block, and the points read
// back from it are the recorded ones.
func TestPromtoolLoadsTheExport(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus): the export's shape is checked in recording.TestOpenMetricsShape")
	}
	ss := newSimSession(t, "healthy:10s,queue-buildup")
	gpus := gpu.NewSimulated(gpu.Config{Now: ss.clk.Now, Filter: gpu.NewFilter(nil, "", false)}, 1, func() gpu.SimLoad {
		l := ss.s.Load()
		return gpu.SimLoad{Util: l.Util, MemUsed: l.MemUsed, MemTotal: l.MemTotal, BatchShare: l.BatchShare}
	})
	defer gpus.Close()
	var recs []recording.Record
	running := 0
	for range 40 {
		at, msgs := ss.step(t)
		snap, _ := gpus.Refresh()
		msgs = append(msgs, snap)
		for _, m := range msgs {
			recs = append(recs, recording.Record{Time: at, Msg: m})
			if sc, ok := m.(model.Scrape); ok {
				for _, s := range sc.Samples {
					if _, ok := s.Gauges[model.Running]; ok {
						running++
					}
				}
			}
		}
	}
	dir := t.TempDir()
	om := filepath.Join(dir, "rec.om")
	var buf bytes.Buffer
	if _, err := recording.OpenMetrics(&buf, recording.Records(recs)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(om, buf.Bytes(), 0o600)
	data := filepath.Join(dir, "data")
	out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, data).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool refused the export: %v\n%s", err, out)
	}
	os.MkdirAll(filepath.Join(data, "wal"), 0o700) // dump opens the WAL
	dump := func(selector string) []string {
		out, err := exec.Command(promtool, "tsdb", "dump", "--match="+selector, data).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool tsdb dump: %v\n%s", err, out)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	if got := dump(`{__name__="llmtop_running",source="scrape"}`); running < 30 || len(got) != running {
		t.Fatalf("%d llmtop_running points back from the TSDB, %d recorded:\n%s", len(got), running, strings.Join(got, "\n"))
	}
	if got := dump(`{__name__="llmtop_gpu_util_pct"}`); len(got) != 40 || !strings.Contains(got[0], `name="`) {
		t.Fatalf("GPU points: %q", got)
	}
	if got := dump(`{__name__="llmtop_ttft_seconds_bucket"}`); len(got) < 40 || !strings.Contains(strings.Join(got, "\n"), `le="+Inf"`) {
		t.Fatalf("TTFT buckets: %d", len(got))
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
