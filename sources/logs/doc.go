// Package logs owns llmtop's log tail: it follows an engine's log (a file
// like tail -F, or a command's output such as docker logs -f), makes every
// line safe to draw, matches it against a catalogue of known engine
// messages, turns periodic stats lines into log-derived model.Samples, and
// hands everything to the UI without ever blocking it.
//
// The pipeline is: follower (file or command) → line splitter (bounded
// length) → model.SanitizeLine → catalogue match + stats parser → bounded queue →
// delivery at a capped rate. Matched lines and stats are never dropped;
// plain lines are dropped oldest-first when the UI cannot keep up, and the
// drop is reported as a line of its own.
package logs
