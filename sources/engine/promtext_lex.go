package engine

import (
	"bytes"
	"strconv"
)

// The tokens of the Prometheus text format, for fastParse.

func skipBlank(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// name reads a plain metric (colon true) or label name; ok is false when
// the name is empty or runs into a quote (a UTF-8 name expfmt reads).
func readName(b []byte, colon bool) (name, rest []byte, ok bool) {
	i := 0
	for ; i < len(b); i++ {
		c := b[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || colon && c == ':' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		if c == '"' {
			return nil, nil, false
		}
		break
	}
	return b[:i], b[i:], i > 0
}

// unescape undoes the text format's escapes: \\, \n and \" (label values
// and HELP). ok is false on any other escape.
func unescape(b []byte) ([]byte, bool) {
	if bytes.IndexByte(b, '\\') < 0 {
		return b, true
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			out = append(out, b[i])
			continue
		}
		if i++; i == len(b) {
			return nil, false
		}
		switch b[i] {
		case '\\', '"':
			out = append(out, b[i])
		case 'n':
			out = append(out, '\n')
		default:
			return nil, false
		}
	}
	return out, true
}

// textFloat is expfmt's parseFloat.
func textFloat(b []byte) (float64, bool) {
	if len(b) == 0 || bytes.ContainsAny(b, "pP_") {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), 64)
	return v, err == nil
}

// closingQuote is the index of the quote that ends a label value (escapes
// skipped), or -1.
func closingQuote(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}
