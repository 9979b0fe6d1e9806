package diagnosis

import (
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// lack is an input a rule went without: what it could not judge on the
// endpoint at url ("" for a line that names no endpoint). The URL and the
// text stay apart until the report is written: a fleet's rules lack the
// same input on thousands of replicas, and joining each pair was a string
// built per replica per refresh for a line nobody reads 2 000 times.
type lack struct{ url, what string }

// lackGroupMin is the fewest endpoints that one not-checked line stands
// for: below it each endpoint keeps its own line, as on one engine or a
// pair of replicas; from it on, a fleet reads "all 2000 endpoints (a, b, c
// and 1997 more): …" once instead of the same line 2 000 times.
const lackGroupMin = 4

// lackNames is how many endpoints a grouped line names.
const lackNames = 3

// lackGroup is every lack with one text.
type lackGroup struct {
	what    string
	n       int      // distinct endpoints
	names   []string // the lackNames of them first in URL order
	seen    []uint64 // endpoints counted, by their place in the input
	others  map[string]bool
	next    int  // the endpoint after the last counted, by place
	written bool // the group's line is out
	plain   bool // its line without an endpoint is out
}

// add counts url in the group and reports whether it was new there.
func (g *lackGroup) add(url string, e *env) bool {
	eps := e.all
	i, ok := g.next, g.next < len(eps) && eps[g.next].URL == url
	if !ok {
		// the rules go through the endpoints in order: the one after the
		// last is the usual guess, the index the rest
		i, ok = e.urlIndex()[url]
	}
	if ok {
		g.next = i + 1
		if g.seen == nil {
			g.seen = make([]uint64, (len(eps)+63)/64)
		}
		if g.seen[i/64]&(1<<(i%64)) != 0 {
			return false
		}
		g.seen[i/64] |= 1 << (i % 64)
	} else {
		if g.others[url] {
			return false
		}
		if g.others == nil {
			g.others = map[string]bool{}
		}
		g.others[url] = true
	}
	g.n++
	// the first few in URL order, as a reader looks for them (and the
	// same every refresh, whatever order the endpoints arrived in)
	switch {
	case len(g.names) < lackNames:
		g.names = append(g.names, url)
	case naturalLess(url, g.names[lackNames-1]):
		g.names[lackNames-1] = url
	default:
		return true
	}
	for i := len(g.names) - 1; i > 0 && naturalLess(g.names[i], g.names[i-1]); i-- {
		g.names[i], g.names[i-1] = g.names[i-1], g.names[i]
	}
	return true
}

// lackLines are the report's per-endpoint not-checked lines, in the order
// the rules met them, each once: "URL: what" where few endpoints lack an
// input, one line naming how many and which where many do.
func (e *env) lackLines() []string {
	if len(e.lacks) == 0 {
		return nil
	}
	var (
		groups []lackGroup
		byWhat = map[string]int{}
		total  = len(e.all)
		// of is each lack's group; -1-g for an endpoint already counted
		of []int
	)
	if e.scratch != nil && cap(e.scratch.of) >= len(e.lacks) {
		of = e.scratch.of[:len(e.lacks)]
	} else {
		of = make([]int, len(e.lacks))
		if e.scratch != nil {
			e.scratch.of = of
		}
	}
	for i, l := range e.lacks {
		g := -1
		if i > 0 && l.what == e.lacks[i-1].what {
			// a rule's lacks come endpoint after endpoint: the same
			// text as the one before needs no look-up
			g = of[i-1]
			if g < 0 {
				g = -1 - g
			}
		} else if gi, ok := byWhat[l.what]; ok {
			g = gi
		} else {
			g = len(groups)
			byWhat[l.what] = g
			groups = append(groups, lackGroup{what: l.what})
		}
		of[i] = g
		if l.url != "" && !groups[g].add(l.url, e) {
			of[i] = -1 - g
		}
	}
	var out []string
	for i, l := range e.lacks {
		g := of[i]
		if g < 0 {
			continue // said already
		}
		grp := &groups[g]
		switch {
		case l.url == "":
			if !grp.plain {
				grp.plain = true
				out = append(out, l.what)
			}
		case grp.n < lackGroupMin:
			out = append(out, l.url+": "+l.what)
		case !grp.written:
			grp.written = true
			out = append(out, grp.line(total))
		}
	}
	return out
}

// naturalLess orders strings with their runs of digits read as numbers:
// http://10.0.0.2 before http://10.0.0.10, as a reader counts them.
func naturalLess(a, b string) bool {
	// the same bytes compare the same: start at the first difference, or
	// at the start of the run of digits it falls in (a fleet's URLs differ
	// only at their ends)
	k := 0
	for k < len(a) && k < len(b) && a[k] == b[k] {
		k++
	}
	for k > 0 && isDigit(a[k-1]) {
		k--
	}
	a, b = a[k:], b[k:]
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			i, j := digits(a), digits(b)
			x, y := strings.TrimLeft(a[:i], "0"), strings.TrimLeft(b[:j], "0")
			if len(x) != len(y) {
				return len(x) < len(y)
			}
			if x != y {
				return x < y
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits is the length of s's leading run of digits.
func digits(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// line is a group's one line: how many endpoints, the first few in URL
// order by name, and what they lack.
func (g *lackGroup) line(total int) string {
	var b strings.Builder
	switch {
	case g.n == total:
		b.WriteString("all " + strconv.Itoa(total) + " endpoints (")
	case g.n < total:
		b.WriteString(strconv.Itoa(g.n) + " of " + strconv.Itoa(total) + " endpoints (")
	default: // some are not among the endpoints watched (a benchmark's URL)
		b.WriteString(strconv.Itoa(g.n) + " endpoints (")
	}
	b.WriteString(strings.Join(g.names, ", "))
	if more := g.n - len(g.names); more > 0 {
		b.WriteString(" and " + strconv.Itoa(more) + " more")
	}
	b.WriteString("): " + g.what)
	return b.String()
}

// PerEndpoint reports whether a report's not-checked line is about
// particular endpoints ("URL: …", or "all 2000 endpoints (…): …" for many)
// rather than an input missing altogether ("GPU readings (…)"): a short
// summary names only the latter, the full list shows both.
func PerEndpoint(line string) bool {
	if strings.HasPrefix(line, "http") {
		return true
	}
	i := strings.Index(line, " endpoints (")
	if i <= 0 || !strings.Contains(line[i:], "): ") {
		return false
	}
	return strings.HasPrefix(line, "all ") || line[0] >= '0' && line[0] <= '9'
}

// memoKey names a text that is the same for every endpoint of an engine
// in one state: "TTFT (vLLM does not expose it)".
type memoKey struct {
	pre, mid, post string
	eng            model.Engine
	failed         bool // the newest scrape failed: then kind says how
	kind           string
}

// notExposed is pre+mid+notExposed(ep)+post, built once per evaluation
// for each engine (and scrape failure) rather than once per replica.
func (e *env) notExposed(ep *Endpoint, pre, mid, post string) string {
	k := memoKey{pre: pre, mid: mid, post: post, eng: ep.Identity.Engine}
	if ep.Scrape.Err != "" {
		k.failed, k.kind = true, string(ep.Scrape.ErrKind)
	}
	s, ok := e.memo[k]
	if !ok {
		if e.memo == nil {
			e.memo = map[memoKey]string{}
		}
		s = pre + mid + notExposed(*ep) + post
		e.memo[k] = s
	}
	return s
}
