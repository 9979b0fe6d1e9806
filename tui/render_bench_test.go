package tui

import (
	"bytes"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"

	"github.com/llmtop/llmtop/model"
)

// fullModel has 16 minutes of one-second scrapes (the store's whole 15-min
// history), 8 GPUs, events and logs, at 200×60 with a 15-min window.
func fullModel(tb testing.TB, noColor bool) *Model {
	tb.Helper()
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: noColor, Window: 15 * time.Minute,
		Sources: map[string]string{"engine": "", "gpu": "", "logs": ""}})
	ss := scrapes(960, stressed)
	for _, s := range ss {
		m.Update(s)
	}
	last := ss[len(ss)-1].Time
	m.Update(gpus(8, last, true))
	feedLogs(m, last.Add(-20*time.Second), true)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	return m
}

// reportCPU adds the CPU time per op (see cpuTime) to a benchmark.
func reportCPU(b *testing.B, start time.Duration) {
	if c := cpuTime(); c > 0 && b.N > 0 {
		b.ReportMetric(float64((c-start).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
	}
}

// BenchmarkFrame is one View at 200×60 after the data changed (the state
// and series are read again from the store, as after every scrape).
func BenchmarkFrame(b *testing.B) {
	m := fullModel(b, false)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		m.d.invalidate()
		_ = m.View()
	}
}

// BenchmarkFrameNoColor is the same frame without colour.
func BenchmarkFrameNoColor(b *testing.B) {
	m := fullModel(b, true)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		m.d.invalidate()
		_ = m.View()
	}
}

// BenchmarkFrameUnchanged is a redraw without new data (a key, a tick).
func BenchmarkFrameUnchanged(b *testing.B) {
	m := fullModel(b, false)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkScrapeAndFrame applies one scrape (Store.Add) and renders.
func BenchmarkScrapeAndFrame(b *testing.B) {
	m := fullModel(b, false)
	more := scrapes(960+b.N, stressed)[960:]
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		m.Update(more[i])
		_ = m.View()
	}
}

// firstWrite records when the program first writes to the terminal.
type firstWrite struct {
	once sync.Once
	at   chan time.Time
	buf  bytes.Buffer
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { w.at <- time.Now() })
	return w.buf.Write(p)
}

// BenchmarkStartToFirstFrame is New + tea.Program start until the first
// frame reaches the (fake) terminal, which answers no queries (theme
// "auto" asks for the background colour and must not wait for it).
func BenchmarkStartToFirstFrame(b *testing.B) {
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out := &firstWrite{at: make(chan time.Time, 1)}
		m := New(Options{Endpoints: []string{testURL}, Theme: "auto"})
		p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(200, 60),
			tea.WithColorProfile(colorprofile.ANSI256), tea.WithEnvironment([]string{"TERM=xterm-256color"}))
		done := make(chan struct{})
		go func() { _, _ = p.Run(); close(done) }()
		select {
		case t := <-out.at:
			b.ReportMetric(float64(t.Sub(start).Microseconds())/1000, "ms/first-frame")
		case <-time.After(5 * time.Second):
			b.Fatal("no frame within 5 s")
		}
		p.Quit()
		<-done
	}
}

// BenchmarkSecondOfTraffic is one second of a watched vLLM at 200×60 as the
// program sees it: a scrape, a GPU snapshot and a log line arrive together
// (View is called after each message, as Bubble Tea does), the gathered
// frame is drawn, then the clock ticks. It is the monitor's steady cost.
func BenchmarkSecondOfTraffic(b *testing.B) {
	m := fullModel(b, false)
	more := scrapes(960+b.N, stressed)[960:]
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		at := more[i].Time
		for _, msg := range []tea.Msg{more[i], gpus(8, at, true),
			model.LogLine{Time: at, Endpoint: testURL, Text: `INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK`},
			frameMsg{}, tickMsg(at.Add(500 * time.Millisecond))} {
			m.Update(msg)
			_ = m.View()
		}
	}
}

// BenchmarkTerminalFrame is what Bubble Tea does with one changed frame
// of 200×60 (its cursedRenderer.flush): parse the view into cells, diff
// them against the previous frame, write the difference. Two frames
// alternate, as when one scrape changed the numbers.
func BenchmarkTerminalFrame(b *testing.B) {
	m := fullModel(b, false)
	more := scrapes(962, stressed)[960:]
	frames := make([]string, 2)
	for i := range frames {
		m.Update(more[i])
		m.Update(frameMsg{})
		frames[i] = m.Render()
	}
	var out bytes.Buffer
	scr := uv.NewTerminalRenderer(&out, []string{"TERM=xterm-256color"})
	scr.SetColorProfile(colorprofile.ANSI256)
	buf := uv.NewScreenBuffer(200, 60)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		content := uv.NewStyledString(frames[i%2])
		buf.Clear()
		content.Draw(buf, buf.Bounds())
		scr.Render(buf.RenderBuffer)
		_ = scr.Flush()
		out.Reset()
	}
}

// monitorModel is what `make monitor-cost` watches: one healthy vLLM at a
// 1 s refresh with its log and the host around it, no GPUs (--no-gpu),
// the default 1-minute window, at 200×60, 90 s in; monitorGPUModel the
// same reading one busy GPU (busyGPU), what `GPU=1 scripts/monitor-cost.sh`
// watches.
func monitorModel(tb testing.TB, noColor bool, n int) (*Model, []model.Scrape) {
	return monitorModelWith(tb, noColor, false, n)
}

func monitorGPUModel(tb testing.TB, n int) (*Model, []model.Scrape) {
	return monitorModelWith(tb, false, true, n)
}

func monitorModelWith(tb testing.TB, noColor, gpu bool, n int) (*Model, []model.Scrape) {
	tb.Helper()
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: noColor, NoGPU: !gpu,
		Sources: map[string]string{"engine": "", "gpu": "", "logs": "", "host": ""}})
	second := monitorSecond
	if gpu {
		second = monitorGPUSecond
	} else {
		m.Update(model.GPUSnapshot{Time: t0, Err: "GPU reading off (--no-gpu)"})
	}
	ss := scrapes(90+n, varied)
	for i, s := range ss[:90] {
		second(m, i, s)
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	_ = m.View()
	return m, ss[90:]
}

// varied is healthy traffic that varies from second to second, as the
// sim's does: the charts and sparklines change with every scrape.
var varied = func(i int) load {
	l := healthy(i)
	l.reqs = 2 + (i*7)%5
	l.ttftHi = 0.05 + 0.01*float64((i*3)%7)
	l.itlHi = 0.018 + 0.002*float64(i%4)
	return l
}

// monitorSecond is second i of the monitor: a scrape, a line of the log,
// the host's look every third second, then the frame.
func monitorSecond(m *Model, i int, s model.Scrape) {
	monitorInputs(m, i, s)
	m.Update(s)
	_ = m.View()
}

// monitorInputs is what comes between two scrapes: a line of the log each
// second, the host's reading every third.
func monitorInputs(m *Model, i int, s model.Scrape) {
	m.Update(model.LogLine{Time: s.Time.Add(-300 * time.Millisecond), Endpoint: testURL,
		Text: `INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK`})
	if i%3 == 0 {
		h := hostReading(s.Time.Add(-100 * time.Millisecond))
		h.CPUBusy = model.Some(0.3 + 0.01*float64(i%7))
		m.Update(h)
	}
}

// BenchmarkMonitorSecond is one steady second of `make monitor-cost` as
// the model sees it (the scrape's apply and rules included).
func BenchmarkMonitorSecond(b *testing.B) {
	m, more := monitorModel(b, false, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		monitorSecond(m, 90+i, more[i])
	}
}

// BenchmarkMonitorFrame is the frame of that second alone: the inputs a
// steady second changes (the store, the log, the rules' report) marked
// changed, without applying anything (the clock stays: a clock without
// scrapes would make the numbers stale).
func BenchmarkMonitorFrame(b *testing.B) {
	m, _ := monitorModel(b, false, 0)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		m.d.invalidate()
		m.d.touched(&m.d.LogsVersion)
		m.d.ReportVersion++
		_ = m.View()
	}
}

// busyGPU is second i of one busy GPU as NVML reads it (the stand-in
// library of `GPU=1 scripts/monitor-cost.sh`, scripts/dist/fakenvml.c):
// utilisation, power, temperature and the SM clock move every second, and
// one process, the engine, holds most of the memory.
func busyGPU(i int, at time.Time) model.GPUSnapshot {
	return model.GPUSnapshot{Time: at, Driver: "999.99-fake", CUDA: "12.8", GPUs: []model.GPU{{
		Index: 0, UUID: "GPU-fa4e0000-0000-4000-8000-000000000000", Name: "llmtop fake NVML GPU",
		Util: model.Some(float64(42 + i%9*6)), MemUtil: model.Some(float64(17 + i%13*3)),
		MemUsed: model.Some(72 << 30), MemTotal: model.Some(80 << 30),
		Power: model.Some(float64(123 + i%37*13)), PowerLimit: model.Some(700),
		Temp: model.Some(float64(55 + i%7*3)), TempSlowdown: model.Some(90),
		SMClock: model.Some(float64(1755 + i%4*15)), SMClockMax: model.Some(1980),
		MemClock: model.Some(2619), MemClockMax: model.Some(2619),
		PCIeRx: model.Some(2048000), PCIeTx: model.Some(1024000),
		Throttle: []string{}, ECCVolatile: model.Some(0), RemappedRows: model.Some(0),
		Processes: []model.GPUProcess{{PID: 4242, Name: "python3", Engine: "vllm", UsedMem: model.Some(70 << 30),
			Cmdline: "python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct --port 8000"}},
		Unsupported: []string{model.GPUFieldFan},
	}}}
}

// monitorGPUSecond is monitorSecond with the GPU's snapshot of that second:
// it comes on the beat with the scrape, and the two are drawn in one frame
// (frameMsg, the frame the screen gathers them into).
func monitorGPUSecond(m *Model, i int, s model.Scrape) {
	monitorInputs(m, i, s)
	m.Update(busyGPU(i, s.Time.Add(-2*time.Millisecond)))
	_ = m.View()
	m.Update(s)
	_ = m.View()
	m.Update(frameMsg{})
	_ = m.View()
}

// BenchmarkMonitorSecondGPU is BenchmarkMonitorSecond with one busy GPU:
// its snapshot's apply, the rules it runs, the GPU pane's draw. The
// difference between the two is the GPU path's cost in the model (NVML's
// calls and the process table are sources/gpu's BenchmarkRefresh).
func BenchmarkMonitorSecondGPU(b *testing.B) {
	m, more := monitorGPUModel(b, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		monitorGPUSecond(m, 90+i, more[i])
	}
}
