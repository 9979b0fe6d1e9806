// Package model owns llmtop's engine-neutral picture of a serving endpoint:
// the concepts every adapter maps onto (running, waiting, KV usage, TTFT…),
// the samples adapters produce, and the Store that turns cumulative counters
// into rates and cumulative histograms into windowed distributions.
//
// It is pure: no I/O, no clocks (every sample carries its own time), no
// goroutines. One owner (the TUI loop, or a CLI command) drives a Store.
//
// Two rules run through it:
//   - Missing is not zero. A value an engine does not expose is an Opt with
//     OK=false and renders as "--" (JSON null), never 0.
//   - A percentile from histogram buckets is an estimate over a window; a Dist
//     carries that window and says it is an estimate.
package model
