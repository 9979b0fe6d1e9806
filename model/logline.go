package model

import "time"

// LogLine is one line of an engine's log as llmtop shows it: already
// stripped of terminal control sequences and made valid UTF-8. Event is set
// when the line matched a known pattern.
type LogLine struct {
	Time     time.Time `json:"time"`
	Endpoint string    `json:"endpoint,omitempty"`
	Text     string    `json:"text"`
	Event    *Event    `json:"event,omitempty"`
	// Backlog marks a line that was already in the log when llmtop began
	// to follow it (a file's last 64 KiB, docker logs --tail): history,
	// shown but never read as happening now (Event.Backlog).
	Backlog bool `json:"backlog,omitempty"`
}

// LogLines are consecutive lines delivered together: a log that writes
// faster than frames are drawn reaches the screen as one message per batch,
// not one per line.
type LogLines []LogLine
