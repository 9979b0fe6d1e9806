// Package core is llmtop's headless monitor: the one aggregate that owns
// what llmtop knows about each watched endpoint — the Store of its samples,
// its events and log lines, its lifecycle, its runs (one engine process
// each, start to end) and the diagnoser with its newest report.
//
// Sources deliver typed messages (model.Scrape, model.Sample,
// model.LogLine(s), model.Event, model.GPUSnapshot, model.PortOwner);
// Apply takes them in, Tick advances the diagnosis on the clock, and every
// face — the TUI, `llmtop diagnose`, `llmtop snapshot`, the `s` snapshot —
// reads the same Monitor. It does no I/O, keeps no package-level state and
// is not safe for concurrent use: one owner drives it.
//
// A run boundary (counters reset, process_start_time_seconds changed, a
// new version or model, the log's start banner) starts a new run: the
// store's windows restart there, the old run's findings close into
// history (but the crash that ended it), and its events stop feeding the
// rules. See docs/architecture.md.
package core
