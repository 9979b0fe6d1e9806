package bench

import (
	"bytes"
	"sync"
	"unicode/utf8"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// Answer quality: is a completed answer blank, an echo of the prompt, or a
// loop of the same few words? The diagnosis's bad-output rule reads the
// counts. Only the first textPrefix bytes of the answer's text (content, not
// reasoning) are kept per request, in a pooled buffer the stream appends to
// without allocating, and judged once when the request ends.

// textPrefix bounds the answer text kept, and the prompt text read, per
// request.
const textPrefix = 2 << 10

// maxTokens bounds the tokens judged: textPrefix bytes hold at most this
// many words of two or more bytes plus separators.
const maxTokens = textPrefix / 2

const (
	// echoRun is the number of consecutive prompt tokens an answer must
	// repeat to be an echo (fewer when the prompt is shorter); random-word
	// prompts make a chance match of this length all but impossible.
	echoRun = 16
	// echoMinPrompt: shorter prompts are not judged (a match of two or three
	// common words proves nothing).
	echoMinPrompt = 4
	// A loop is a unit of at most loopMaxPeriod tokens repeated back to back
	// at least loopMinReps times, spanning at least loopMinSpan tokens: 20×
	// the same token, 10× a pair, 5× four words, 4× a sentence.
	loopMaxPeriod = 32
	loopMinReps   = 4
	loopMinSpan   = 20
)

// textScratch is one request's answer buffer and the judge's work space.
type textScratch struct {
	text           []byte
	prompt, answer []uint64 // token hashes
	shingles       []uint64
}

var scratchPool = sync.Pool{New: func() any {
	return &textScratch{text: make([]byte, 0, textPrefix), prompt: make([]uint64, 0, maxTokens),
		answer: make([]uint64, 0, maxTokens), shingles: make([]uint64, 0, maxTokens)}
}}

// judge marks a completed record blank, echoed or repetitive from the
// answer's text prefix and the request body's prompt. sawReasoning: the
// answer had reasoning text, so no answer text is not a blank answer.
func judge(rec *report.Record, text, body []byte, sawReasoning bool, sc *textScratch) {
	if !rec.OK {
		return
	}
	// Each answer counts once, so the shares add up: blank, else echoed
	// (an echo repeated is still an echo), else repetitive.
	rec.Blank = len(bytes.TrimSpace(text)) == 0 && !sawReasoning
	if rec.Blank {
		return
	}
	sc.answer = tokenHashes(sc.answer[:0], text)
	sc.prompt = tokenHashes(sc.prompt[:0], promptOf(body))
	rec.Echoed = echoes(sc.prompt, sc.answer, sc)
	rec.Repetitive = !rec.Echoed && loops(sc.answer)
}

// promptOf finds the prompt in a request body built by Config.body (the
// first "content" or "prompt" string), at most textPrefix bytes of it, still
// JSON-escaped (the synthetic prompts need no escapes).
func promptOf(body []byte) []byte {
	for _, key := range [][]byte{[]byte(`"content":"`), []byte(`"prompt":"`)} {
		if i := bytes.Index(body, key); i >= 0 {
			start := i + len(key) - 1
			end := stringEnd(body, start)
			return body[start+1 : min(end, start+1+textPrefix)]
		}
	}
	return nil
}

// tokenHashes appends one hash per token of s: a token is a run of ASCII
// letters and digits (case-folded), one non-ASCII character, or one
// punctuation byte; white space separates.
func tokenHashes(dst []uint64, s []byte) []uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	for i := 0; i < len(s) && len(dst) < cap(dst); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isAlnum(c):
			h := uint64(offset)
			for ; i < len(s) && isAlnum(s[i]); i++ {
				h = (h ^ uint64(lower(s[i]))) * prime
			}
			dst = append(dst, h)
		default:
			n := 1
			if c >= utf8.RuneSelf {
				_, n = utf8.DecodeRune(s[i:])
			}
			h := uint64(offset)
			for _, b := range s[i : i+n] {
				h = (h ^ uint64(b)) * prime
			}
			dst = append(dst, h^1) // apart from a one-letter word
			i += n
		}
	}
	return dst
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// echoes reports whether answer repeats min(echoRun, len(prompt))
// consecutive tokens of prompt: the prompt's windows of that length are
// hashed and sorted, then each of the answer's windows is looked up.
func echoes(prompt, answer []uint64, sc *textScratch) bool {
	if len(prompt) < echoMinPrompt {
		return false
	}
	k := min(echoRun, len(prompt))
	if len(answer) < k {
		return false
	}
	w := newWindow(k)
	sc.shingles = sc.shingles[:0]
	for i, x := range prompt {
		if h := w.push(prompt, i, x); i >= k-1 {
			sc.shingles = append(sc.shingles, h)
		}
	}
	sortU64(sc.shingles)
	w = newWindow(k)
	for i, x := range answer {
		if h := w.push(answer, i, x); i >= k-1 && contains(sc.shingles, h) {
			return true
		}
	}
	return false
}

// window is a polynomial rolling hash over the last k tokens.
type window struct {
	k      int
	pow, h uint64
}

const windowBase = 0x100000001b3

func newWindow(k int) window {
	w := window{k: k, pow: 1}
	for range k - 1 {
		w.pow *= windowBase
	}
	return w
}

// push adds t[i] = x and returns the hash of t[i−k+1 … i] (meaningful once
// i ≥ k−1).
func (w *window) push(t []uint64, i int, x uint64) uint64 {
	if i >= w.k {
		w.h -= t[i-w.k] * w.pow
	}
	w.h = w.h*windowBase + x
	return w.h
}

// loops reports a unit of at most loopMaxPeriod tokens repeated back to
// back (for each period p, a stretch where every token equals the one p
// before it) that a model stuck in a loop would produce: it runs to the end
// of the text judged, or covers half of it. A table's rule line or a row of
// "=" in the middle of an answer does not.
func loops(t []uint64) bool {
	for p := 1; p <= loopMaxPeriod && 2*p <= len(t); p++ {
		run := 0
		for i := p; i <= len(t); i++ {
			if i < len(t) && t[i] == t[i-p] {
				run++
				continue
			}
			span := run + p
			if run > 0 && span >= loopMinSpan && span >= loopMinReps*p && (i == len(t) || 2*span >= len(t)) {
				return true
			}
			run = 0
		}
	}
	return false
}

// sortU64 sorts in place (heap sort: no allocation, n log n).
func sortU64(a []uint64) {
	n := len(a)
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(a, i, n)
	}
	for end := n - 1; end > 0; end-- {
		a[0], a[end] = a[end], a[0]
		siftDown(a, 0, end)
	}
}

func siftDown(a []uint64, i, n int) {
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && a[c+1] > a[c] {
			c++
		}
		if a[i] >= a[c] {
			return
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
}

// contains is a binary search in sorted a.
func contains(a []uint64, x uint64) bool {
	lo, hi := 0, len(a)
	for lo < hi {
		m := (lo + hi) / 2
		if a[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(a) && a[lo] == x
}

// appendText appends the JSON string contents s (without its quotes),
// unescaped, to dst up to cap(dst): it never grows dst, so the stream's hot
// path does not allocate.
func appendText(dst, s []byte) []byte {
	for i := 0; i < len(s) && len(dst) < cap(dst); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			c = '\n'
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'b', 'f':
			c = ' '
		case 'u':
			r, n := unicodeEscape(s[i-1:])
			i += n - 2
			if cap(dst)-len(dst) < utf8.RuneLen(r) {
				return dst
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // \" \\ \/
			c = s[i]
		}
		dst = append(dst, c)
	}
	return dst
}

// unicodeEscape decodes \uXXXX at the start of s (and a following low
// surrogate), returning the rune and the bytes used; a bad escape is
// U+FFFD over the two bytes "\u".
func unicodeEscape(s []byte) (rune, int) {
	r, ok := hex4(s)
	if !ok {
		return utf8.RuneError, 2
	}
	if r >= 0xD800 && r < 0xDC00 {
		if lo, ok := hex4(s[6:]); ok && lo >= 0xDC00 && lo < 0xE000 {
			return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

// hex4 reads "\uXXXX" at the start of s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
