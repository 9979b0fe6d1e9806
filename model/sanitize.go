package model

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every string llmtop did not write itself — engine JSON and labels, model
// ids, versions, error bodies, config text, process command lines, log
// lines — passes through this file before it can reach a terminal. The
// result never moves the cursor, changes the title, writes the clipboard
// (OSC 52) or sets a colour (SGR), and is width-safe: what a layout measures
// is what the terminal draws (no tabs, no zero-width or bidi format
// characters, no emoji variation selectors).

// tabStop is where a log line's tab is expanded to (terminal default).
const tabStop = 8

// SanitizeLine makes a raw log line safe to draw: it removes terminal
// control sequences (CSI, OSC — including title changes —, DCS/SOS/PM/APC
// strings, other ESC sequences) and every C0/C1 control character, expands
// tabs to spaces, replaces invalid UTF-8 with U+FFFD, drops format
// characters, and keeps only the last carriage-return segment (what a
// terminal would have shown for a tqdm progress bar).
func SanitizeLine(raw []byte) string {
	if plain(raw) {
		return Scrub(string(raw))
	}
	// Keep what a terminal shows after the last \r, unless that is empty
	// (a trailing CR of a CRLF line ending).
	if i := lastCR(raw); i >= 0 {
		if rest := trimControlTail(raw[i+1:]); len(rest) > 0 {
			raw = raw[i+1:]
		} else {
			raw = raw[:i]
			if j := lastCR(raw); j >= 0 && len(trimControlTail(raw[j+1:])) > 0 {
				raw = raw[j+1:]
			}
		}
	}
	return Scrub(clean(raw, modeLine))
}

// Clean makes one outside field (a model id, a version, a label value, an
// error message, a URL) safe to print on one line: as SanitizeLine, and
// line breaks and tabs become single spaces.
func Clean(s string) string {
	if plain([]byte(s)) && !strings.Contains(s, "\t") {
		return Scrub(s)
	}
	return Scrub(clean([]byte(s), modeField))
}

// CleanAll cleans each string of a slice in place and returns it.
func CleanAll(ss []string) []string {
	for i, s := range ss {
		ss[i] = Clean(s)
	}
	return ss
}

// CleanMap returns a copy of m with keys cleaned and values passed through
// val (when not nil).
func CleanMap[V any](m map[string]V, val func(V) V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		if val != nil {
			v = val(v)
		}
		out[Clean(k)] = v
	}
	return out
}

// How clean treats tabs and line breaks.
const (
	modeLine  = iota // a log line: tabs expanded to spaces, CR/LF dropped
	modeField        // one field: tabs and line breaks become one space
	modeText         // a block of output: tabs and newlines kept, CR dropped
)

func clean(raw []byte, mode int) string {
	var b strings.Builder
	b.Grow(len(raw))
	col := 0 // runes written, for tab stops (a close guess at cells)
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == 0x1b {
			i = skipEscape(raw, i+1)
			continue
		}
		if c < 0x80 {
			switch {
			case c == '\t' && mode == modeLine:
				n := tabStop - col%tabStop
				b.WriteString("        "[:n])
				col += n
			case (c == '\t' || c == '\n') && mode == modeText:
				b.WriteByte(c)
				col = 0
			case (c == '\t' || c == '\n' || c == '\r') && mode == modeField:
				b.WriteByte(' ')
				col++
			case c >= 0x20 && c != 0x7f:
				b.WriteByte(c)
				col++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteRune(utf8.RuneError)
			col++
			i++
			continue
		}
		i += size
		if r >= 0x80 && r <= 0x9f { // C1 controls, some of which start sequences
			switch r {
			case 0x9b: // CSI
				i = skipCSI(raw, i)
			case 0x9d, 0x90, 0x98, 0x9e, 0x9f: // OSC, DCS, SOS, PM, APC
				i = skipString(raw, i)
			}
			continue
		}
		switch {
		case r == 0x2028 || r == 0x2029: // line and paragraph separators
			b.WriteByte(' ')
			col++
			continue
		case r == 0xfe0e || r == 0xfe0f: // emoji variation selectors: terminals disagree on the width
			continue
		case unicode.Is(unicode.Cf, r): // zero-width and bidi format characters (U+202E…)
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// Unsafe reports whether s holds anything Clean would change: a test for
// output that should already have been cleaned.
func Unsafe(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 ||
			r == 0xfe0e || r == 0xfe0f || unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return !utf8.ValidString(s)
}

// plain reports whether raw is printable ASCII only, the common case, which
// then needs no copying work beyond the string conversion.
func plain(raw []byte) bool {
	for _, c := range raw {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

func lastCR(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\r' {
			return i
		}
	}
	return -1
}

func trimControlTail(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// skipEscape skips the sequence whose ESC was just before i.
func skipEscape(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '[':
		return skipCSI(b, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(b, i+1)
	}
	// nF sequences: intermediates 0x20–0x2f then one final byte.
	for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
		i++
	}
	if i < len(b) {
		i++
	}
	return i
}

// skipCSI skips parameter/intermediate bytes and the final byte (0x40–0x7e).
// A control byte in the middle aborts the sequence, as terminals do.
func skipCSI(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		i++
		if c >= 0x40 && c <= 0x7e {
			return i
		}
		if c < 0x20 || c > 0x7e {
			return i
		}
	}
	return i
}

// skipString skips an OSC/DCS/SOS/PM/APC body up to BEL, ST (ESC \), C1 ST
// (U+009C) or the end of the line.
func skipString(b []byte, i int) int {
	for i < len(b) {
		switch {
		case b[i] == 0x07:
			return i + 1
		case b[i] == 0x1b:
			if i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
			return i + 1
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] == 0x9c:
			return i + 2
		}
		i++
	}
	return i
}
