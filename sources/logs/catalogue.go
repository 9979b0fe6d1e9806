package logs

import "github.com/llmtop/llmtop/engines"

// Pattern is one known log message: a row of an engine's file in engines/
// (its own lines) or of engines/runtimes.go (the lines of the runtimes
// engines share).
type Pattern = engines.LogLine

// Catalogue is every known message, the engines' own lines before the
// shared ones: a line raises at most one event, the first row that
// matches. Sources: LOG-PATTERNS.md.
var Catalogue = engines.LogLines()
