package logs

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Sanitize makes a raw log line safe to draw: it removes terminal control
// sequences (CSI, OSC — including title changes —, DCS/SOS/PM/APC strings,
// other ESC sequences) and every C0/C1 control character except tab,
// replaces invalid UTF-8 with U+FFFD, and keeps only the last
// carriage-return segment (what a terminal would have shown for a tqdm
// progress bar). The result can never move the cursor or change the title.
func Sanitize(raw []byte) string {
	if plain(raw) {
		return string(raw)
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
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == 0x1b {
			i = skipEscape(raw, i+1)
			continue
		}
		if c < 0x80 {
			if c >= 0x20 && c != 0x7f || c == '\t' {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteRune(utf8.RuneError)
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
		b.WriteRune(r)
	}
	return b.String()
}

// plain reports whether raw is printable ASCII (and tabs) only, the common
// case, which then needs no copying work beyond the string conversion.
func plain(raw []byte) bool {
	for _, c := range raw {
		if (c < 0x20 && c != '\t') || c >= 0x7f {
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

// Cut shortens s for display to at most max bytes on a rune boundary and
// says how much was left out. Matching always uses the whole line.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " … [" + strconv.Itoa(len(s)-n) + " more bytes]"
}
