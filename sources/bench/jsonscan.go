package bench

// A minimal scanner for the few fields a streamed chunk's timing needs. It
// allocates nothing, so decoding stays off the per-token cost: the chunk has
// already been timestamped and checked with json.Valid when these run.

// findKey returns the index of the value of the first object key named key
// at or after from (which must not be inside a string), or -1. Keys are
// matched anywhere in the nesting; escapes inside strings are honoured.
func findKey(b []byte, key string, from int) int {
	for i := from; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		// A structural quote: a key or a string value starts here.
		if k := i + 1 + len(key); k < len(b) && b[k] == '"' && string(b[i+1:k]) == key {
			j := skipSpace(b, k+1)
			if j < len(b) && b[j] == ':' {
				return skipSpace(b, j+1)
			}
		}
		i = stringEnd(b, i)
	}
	return -1
}

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

// hasText reports whether any key named key holds a non-empty string.
func hasText(b []byte, key string) bool {
	for i := findKey(b, key, 0); i >= 0; i = findKey(b, key, i) {
		if i < len(b) && b[i] == '"' {
			if i+1 < len(b) && b[i+1] != '"' {
				return true
			}
			i = stringEnd(b, i) + 1
			continue
		}
		if i >= len(b) {
			return false
		}
	}
	return false
}

// intAt reads a non-negative integer at i; ok is false when none is there.
func intAt(b []byte, i int) (n int, ok bool) {
	for ; i >= 0 && i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
		ok = true
	}
	return n, ok
}

// intKey reads the integer value of key at or after from.
func intKey(b []byte, key string, from int) (int, bool) {
	i := findKey(b, key, from)
	if i < 0 {
		return 0, false
	}
	return intAt(b, i)
}

// notNull reports whether key is present with a value other than null.
func notNull(b []byte, key string) bool {
	i := findKey(b, key, 0)
	return i >= 0 && i < len(b) && !(len(b)-i >= 4 && string(b[i:i+4]) == "null")
}

// isTrue reports whether key is present with the value true.
func isTrue(b []byte, key string) bool {
	i := findKey(b, key, 0)
	return i >= 0 && len(b)-i >= 4 && string(b[i:i+4]) == "true"
}
