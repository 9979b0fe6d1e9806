// Package report owns the benchmark's numbers: what the client saw of each
// request (Record), the metrics computed from them with `vllm bench serve`'s
// definitions and JSON field names (Metrics, Result), the sweep's knee
// (Sweep), and their text rendering. It is pure — no I/O, no clocks — so
// the TUI and the diagnosis can read results without importing the load
// generator's HTTP code.
package report

import "time"

// ErrKind classifies a failed request so a run ends with counts by kind.
type ErrKind string

const (
	ErrNone        ErrKind = ""
	ErrHTTP        ErrKind = "http_status"      // non-2xx answer (Record.Status says which)
	ErrRateLimited ErrKind = "rate_limited"     // 429, with Retry-After when the server sent one
	ErrTimeout     ErrKind = "timeout"          // no answer, or the stream stalled, past the timeout
	ErrConnect     ErrKind = "connect"          // refused, unreachable, DNS
	ErrDisconnect  ErrKind = "disconnect"       // the stream ended before its end marker
	ErrEmpty       ErrKind = "empty_response"   // the stream ended without any content
	ErrMalformed   ErrKind = "malformed_stream" // a line that is not SSE/NDJSON or a payload that is not JSON
	ErrStream      ErrKind = "stream_error"     // the server sent an error object in the stream
	ErrCancelled   ErrKind = "cancelled"        // the run was stopped while the request was in flight
)

// Record is what the client saw of one request. Durations are measured from
// Start as bytes arrived (when a line completed, before JSON decoding).
type Record struct {
	// Index is the request's number in the run; it is sent as the
	// X-Request-Id "llmtop-bench-<Index>" so server logs can be matched.
	Index int
	// ResponseID is the id the server gave its answer ("chatcmpl-…"), to
	// find the request in the server's logs and records.
	ResponseID string
	// Start is when the request was sent, after any wait for a concurrency
	// slot (Queued).
	Start  time.Time
	Queued time.Duration
	// TTFT is the arrival of the first chunk carrying content or reasoning
	// content (not the role-only chunk); zero when none came.
	TTFT time.Duration
	// ITL holds the gaps between consecutive content chunks.
	ITL []time.Duration
	// E2EL is the arrival of the last content chunk.
	E2EL time.Duration
	// Chunks counts content chunks.
	Chunks int
	// FinishReason is why the server ended the answer ("stop", "length"…),
	// empty when it did not say.
	FinishReason string
	// PromptTokens/OutputTokens come from the response's usage when
	// PromptFromUsage/OutputFromUsage; otherwise they are the prompt's target
	// length and the content chunk count.
	PromptTokens, OutputTokens       int
	PromptFromUsage, OutputFromUsage bool

	// The answer's text, judged when the request completed (its first 2 KB
	// of content, reasoning excluded), at most one of them: Blank is white
	// space only (and no reasoning), Echoed repeats 16 consecutive words of
	// the prompt (all of a shorter prompt), Repetitive ends in (or is
	// mostly) a unit of up to 32 words repeated back to back.
	Blank, Echoed, Repetitive bool

	OK         bool
	Err        ErrKind
	Status     int           // HTTP status, 0 when none came
	RetryAfter time.Duration // from a 429's Retry-After
	Detail     string        // a short error message (never carries credentials)
}
