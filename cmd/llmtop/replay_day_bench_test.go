//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/tui"
)

// Issue 33's day: a recording of 24 hours, synthesised on a fake clock —
// one simulated hour (the vLLM simulator through its scenarios, scraped
// through the real adapter, its log through the real log source, one
// simulated GPU, as BenchmarkRecordingSize records it) played 24 times,
// each hour's messages moved on by an hour (so the engine restarts at
// each hour, as the crash-restart scenario makes it do within one).
//
//	go test ./cmd/llmtop -run '^$' -bench 'ReplayDay|DiagnoseFromDay' -benchtime 5x
//
// The file (≈ 42 MB) is made once, in the user's cache directory.

const dayHours = 24

func dayRecording(b *testing.B) string { return dayFile(b, false) }

// dayFile is the day without checkpoints (as an llmtop before issue 33
// wrote it), or with them: a checkpoint every checkpointEvery, for this
// build (the file is made again when the build changes, about two
// minutes).
func dayFile(b *testing.B, checkpoints bool) string {
	b.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "llmtop", "bench")
	path := filepath.Join(dir, "day-v1.llmrec")
	if checkpoints {
		path = filepath.Join(dir, "day-v2-"+buildID()+".llmrec")
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	os.MkdirAll(dir, 0o700)
	if checkpoints { // another build's day is of no more use
		old, _ := filepath.Glob(filepath.Join(dir, "day-v2-*.llmrec"))
		for _, f := range old {
			os.Remove(f)
		}
	}
	var hour bytes.Buffer
	recordSimHourTo(b, &hour, 0)
	hourPath := filepath.Join(b.TempDir(), "hour.llmrec")
	if err := os.WriteFile(hourPath, hour.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	h, recs, _, err := recording.ReadFile(hourPath)
	if err != nil {
		b.Fatal(err)
	}
	tmp := path + ".part"
	f, err := os.Create(tmp)
	if err != nil {
		b.Fatal(err)
	}
	if checkpoints {
		h = checkpointed(h)
	}
	w, err := recording.NewWriter(f, h)
	if err != nil {
		b.Fatal(err)
	}
	shadow(w, h)
	for i := range dayHours {
		d := time.Duration(i) * time.Hour
		for _, rec := range recs {
			if _, err := w.Write(rec.Time.Add(d), shiftTimes(rec.Msg, d)); err != nil {
				b.Fatal(err)
			}
		}
		w.Flush()
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// shiftTimes returns a copy of msg with every non-zero time.Time inside it
// moved by d.
func shiftTimes(msg any, d time.Duration) any {
	v := reflect.New(reflect.TypeOf(msg)).Elem()
	v.Set(reflect.ValueOf(msg))
	shiftValue(v, d)
	return v.Interface()
}

var timeType = reflect.TypeFor[time.Time]()

func shiftValue(v reflect.Value, d time.Duration) {
	if v.Type() == timeType {
		if t := v.Interface().(time.Time); !t.IsZero() && v.CanSet() {
			v.Set(reflect.ValueOf(t.Add(d)))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				shiftValue(f, d)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			c := reflect.New(v.Type().Elem())
			c.Elem().Set(v.Elem())
			shiftValue(c.Elem(), d)
			v.Set(c)
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		for i := range c.Len() {
			shiftValue(c.Index(i), d)
		}
		v.Set(c)
	case reflect.Map:
		if v.IsNil() || v.Type().Elem().Kind() != reflect.Struct {
			return
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			shiftValue(e, d)
			c.SetMapIndex(it.Key(), e)
		}
		v.Set(c)
	}
}

// BenchmarkReplayDayOpen: `llmtop replay` opening the day to its first
// frame — the header and first record read, the index started, the
// position at the start built, the screen drawn once.
func BenchmarkReplayDayOpen(b *testing.B) {
	path := dayRecording(b)
	b.ResetTimer()
	var took, cpu []time.Duration
	for range b.N {
		s, c := time.Now(), cpuTime()
		ctx, cancel := context.WithCancel(context.Background())
		open := func() (*recording.Reader, error) { return recording.Open(path) }
		r, err := open()
		if err != nil {
			b.Fatal(err)
		}
		h := r.Header()
		first, err := r.Next()
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		rp, err := newReplayer(path, h, open, replayOptions{Speed: 1}, ctx.Done())
		if err != nil {
			b.Fatal(err)
		}
		p, err := rp.seekTo(first.Time)
		if err != nil {
			b.Fatal(err)
		}
		m := tui.New(tui.Options{Core: p.mon, Endpoints: h.Endpoints, Window: time.Duration(h.Window), Now: first.Time, NoColor: true, Replay: rp.control})
		m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
		if len(m.View().Content) == 0 {
			b.Fatal("no frame")
		}
		took, cpu = append(took, time.Since(s)), append(cpu, cpuTime()-c)
		cancel()
		rp.x.waitDone(nil)
		rp.close()
	}
	b.ReportMetric(median(took), "median_ms")
	b.ReportMetric(median(cpu), "median_cpu_ms")
}

// BenchmarkReplayDaySeek: a seek anywhere in the day once the index is
// built (index_s: the background pass that builds it, while the replay
// plays).
func BenchmarkReplayDaySeek(b *testing.B) {
	path := dayRecording(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start, startCPU := time.Now(), cpuTime()
	open := func() (*recording.Reader, error) { return recording.Open(path) }
	r, err := open()
	if err != nil {
		b.Fatal(err)
	}
	h := r.Header()
	first, _ := r.Next()
	r.Close()
	rp, err := newReplayer(path, h, open, replayOptions{Speed: 1}, ctx.Done())
	if err != nil {
		b.Fatal(err)
	}
	defer rp.close()
	last, _, err, _ := rp.x.waitDone(ctx.Done())
	if err != nil {
		b.Fatal(err)
	}
	index, indexCPU := time.Since(start), cpuTime()-startCPU
	span := last.Sub(first.Time)
	rng := rand.New(rand.NewPCG(3, 4))
	var took, cpu []time.Duration
	b.ResetTimer()
	for range b.N {
		t := first.Time.Add(time.Duration(rng.Int64N(int64(span))))
		s, c := time.Now(), cpuTime()
		if _, err := rp.seekTo(t); err != nil {
			b.Fatal(err)
		}
		took, cpu = append(took, time.Since(s)), append(cpu, cpuTime()-c)
	}
	b.ReportMetric(median(took), "median_ms")
	b.ReportMetric(float64(slices.Max(took).Microseconds())/1000, "max_ms")
	// the CPU a seek takes: on a shared machine, the wall time is mostly
	// waiting for a core
	b.ReportMetric(median(cpu), "median_cpu_ms")
	b.ReportMetric(float64(slices.Max(cpu).Microseconds())/1000, "max_cpu_ms")
	b.ReportMetric(index.Seconds(), "index_s")
	b.ReportMetric(indexCPU.Seconds(), "index_cpu_s")
	if st, err := rp.x.file.Stat(); err == nil {
		b.ReportMetric(float64(st.Size())/1e6, "index_MB")
	}
}

func median(d []time.Duration) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	return float64(d[len(d)/2].Microseconds()) / 1000
}

// cpuTime is the process's CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDiagnoseFromDay: `diagnose --from` on the day, as it runs
// (resumeRecording, judgeRecording): with checkpoints, from the last one;
// without (an older llmtop's recording), from the start.
//
//	go test ./cmd/llmtop -run '^$' -bench DiagnoseFromDay -benchtime 3x
func BenchmarkDiagnoseFromDay(b *testing.B) {
	for _, c := range []struct {
		name        string
		checkpoints bool
	}{{"checkpoints", true}, {"none", false}} {
		b.Run(c.name, func(b *testing.B) {
			path := dayFile(b, c.checkpoints)
			var took, cpu []time.Duration
			b.ResetTimer()
			for range b.N {
				s, t := time.Now(), cpuTime()
				r, from, err := resumeRecording(io.Discard, path)
				if err != nil {
					b.Fatal(err)
				}
				if (from != nil) != c.checkpoints {
					b.Fatalf("resumed from a checkpoint: %v", from != nil)
				}
				if _, err := judgeRecording(r.Header(), r, from); err != nil {
					b.Fatal(err)
				}
				r.Close()
				took, cpu = append(took, time.Since(s)), append(cpu, cpuTime()-t)
			}
			b.ReportMetric(median(took), "median_ms")
			b.ReportMetric(median(cpu), "median_cpu_ms")
			b.ReportMetric(peakRSS(), "peak_rss_MB")
			if st, err := os.Stat(path); err == nil {
				b.ReportMetric(float64(st.Size())/1e6, "file_MB")
			}
		})
	}
}

// BenchmarkSnapshotFromDay: `snapshot --from` on the day (with this
// build's checkpoints), at its middle and at its end: from the newest
// checkpoint at or before the moment (resumeAt, replayUntil).
//
//	go test ./cmd/llmtop -run '^$' -bench SnapshotFromDay -benchtime 3x
func BenchmarkSnapshotFromDay(b *testing.B) {
	path := dayFile(b, true)
	for _, at := range []string{"+12h", ""} {
		name := "at_end"
		if at != "" {
			name = "at_" + at[1:]
		}
		b.Run(name, func(b *testing.B) {
			var took, cpu []time.Duration
			for range b.N {
				s, c := time.Now(), cpuTime()
				r, from, err := resumeAt(path, at)
				if err != nil {
					b.Fatal(err)
				}
				if from == nil {
					b.Fatal("not resumed from a checkpoint")
				}
				if _, _, err := replayUntil(r.Header(), r, at, from); err != nil {
					b.Fatal(err)
				}
				r.Close()
				took, cpu = append(took, time.Since(s)), append(cpu, cpuTime()-c)
			}
			b.ReportMetric(median(took), "median_ms")
			b.ReportMetric(median(cpu), "median_cpu_ms")
			b.ReportMetric(peakRSS(), "peak_rss_MB")
		})
	}
}

// peakRSS is the process's peak resident memory so far (VmHWM), in MB; 0
// where /proc does not say.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
