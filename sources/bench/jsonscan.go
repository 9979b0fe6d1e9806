package bench

// A minimal scanner for the few fields a streamed chunk's timing needs. It
// allocates nothing, so decoding stays off the per-token cost: the chunk has
// already been timestamped (and framing-checked by wellFormed) when API.parse
// runs.

// stringEnd returns the index of the closing quote of the string opening at
// i (len(b) when it is unterminated).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// intAt reads a non-negative integer at i; ok is false when none is there.
func intAt(b []byte, i int) (n int, ok bool) {
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
		ok = true
	}
	return n, ok
}

// literal reports whether b holds lit at i.
func literal(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// wellFormed is a cheap framing check of a JSON object: strings terminated,
// braces and brackets balanced, nothing after the closing brace. It catches
// truncated and interleaved payloads at a fraction of json.Valid's cost
// (literals and commas are not checked).
func wellFormed(b []byte) bool {
	if len(b) < 2 || b[0] != '{' {
		return false
	}
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i)
			if i >= len(b) {
				return false
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return false
			}
			if depth == 0 {
				return skipSpace(b, i+1) == len(b)
			}
		}
	}
	return false
}
