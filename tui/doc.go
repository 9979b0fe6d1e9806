// Package tui owns llmtop's monitor screen: the Bubble Tea root model, its
// panes (header, latency, throughput, scheduler, GPU, events, diagnosis,
// endpoints), full-screen overlays (help, explain, log view…), the keymap and
// the semantic theme.
//
// Data arrives only as messages (model.Scrape, model.GPUSnapshot,
// model.LogLine, model.Sample from logs, model.Event), delivered by the
// sources through Program.Send. Update feeds them into state the root owns (a
// model.Store, rings of events and log lines); View renders from that state.
// Neither does I/O: saving a snapshot and changing the sources' interval run
// in tea.Cmds through functions injected in Options.
//
// Numbers older than three refresh intervals are stale (freshness.go): the
// engine panes dim them under "as of HH:MM:SS (20s ago)", or show the
// engine's log stats lines instead, labelled "from log", while scrapes fail.
//
// Cost: data arriving together is drawn in one frame (View holds the
// previous frame up to 50 ms); a pane implementing Keyed is redrawn only
// when its own inputs change (Data's per-input versions: store, GPU,
// events, logs; the Host pane's reading), and any pane only when what it
// read of the clock reads differently (draw_clock.go); what is drawn
// again reuses the last frame's box lines, charts and screen rows where
// they are drawn from the same (layout_cache.go); sparklines are read into
// buffers kept between changes. BenchmarkSecondOfTraffic and
// BenchmarkMonitorSecond measure the steady cost.
//
// # Extension points
//
// Other features add a component with a one-line registration in an init
// function of their own file in this package:
//
//	func init() { RegisterPane(PaneSpec{ID: "diagnosis", Slot: 6, New: newFindingsPane}) }
//	func init() { RegisterOverlay(OverlaySpec{ID: "bench", Key: DefaultKeyMap().Bench, New: newBenchForm}) }
//
// Registering an existing pane ID replaces the pane registered before it
// (init functions run in file-name order). The diagnosis feature's side
// panel ("diagnosis", slot 6) computes its findings from Data (pure) and
// caches them until the store, GPU or event versions change; it shows the symptom table
// (symptoms.go) under them. An overlay registered for
// the reserved keys b (benchmark) and d (diagnosis list) enables them. Any
// message the root does not know is passed to every pane and overlay that
// implements Receiver, so a component can start work with its own tea.Cmd
// and receive its own result messages.
package tui
