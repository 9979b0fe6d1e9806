package logs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/llmtop/llmtop/model"
)

// Matcher runs a compiled catalogue over lines. It is safe for concurrent
// use (it holds no per-line state).
type Matcher struct {
	rules []rule
}

type rule struct {
	Pattern
	needles []string
	// the regex is compiled on the first line that passes the prefilter:
	// compiling the whole catalogue at start-up cost every run ~5 ms and
	// 1 MB, and most rows never see a candidate line
	once  sync.Once
	re    *regexp.Regexp
	names []string
}

func (r *rule) compile() {
	r.once.Do(func() {
		r.re = regexp.MustCompile(r.Regex) // NewMatcher or the catalogue's tests proved it compiles
		r.names = r.re.SubexpNames()
	})
}

// Match is a catalogue hit: the pattern and the fields it extracted (only
// non-empty groups).
type Match struct {
	Pattern *Pattern
	Fields  map[string]string
	Start   int // byte offset of the match in the line
}

// NewMatcher compiles patterns (normally Catalogue). A row whose regex does
// not compile, or whose id repeats, is an error: the table is code.
func NewMatcher(patterns []Pattern) (*Matcher, error) {
	m, err := newMatcher(patterns)
	if err != nil {
		return nil, err
	}
	for i := range m.rules {
		if _, err := regexp.Compile(m.rules[i].Regex); err != nil {
			return nil, fmt.Errorf("log catalogue %s: %w", m.rules[i].ID, err)
		}
	}
	return m, nil
}

// newMatcher checks the ids and leaves the regexes to compile on first
// use (see rule).
func newMatcher(patterns []Pattern) (*Matcher, error) {
	m := &Matcher{rules: make([]rule, len(patterns))}
	seen := map[string]bool{}
	for i, p := range patterns {
		if p.ID == "" || seen[p.ID] {
			return nil, fmt.Errorf("log catalogue: empty or repeated id %q", p.ID)
		}
		seen[p.ID] = true
		r := &m.rules[i]
		r.Pattern = p
		if p.Needle != "" {
			r.needles = strings.Split(p.Needle, "|")
		}
	}
	return m, nil
}

// DefaultMatcher is the Catalogue, each regex compiled on first use (its
// tests compile every row).
var DefaultMatcher = mustMatcher(Catalogue)

func mustMatcher(p []Pattern) *Matcher {
	m, err := newMatcher(p)
	if err != nil {
		panic(err) // the catalogue is a literal in this package; its tests compile it
	}
	return m
}

// Match returns the first pattern the whole (sanitized, uncut) line matches.
func (m *Matcher) Match(line string) (Match, bool) {
	for i := range m.rules {
		r := &m.rules[i]
		if !r.prefilter(line) {
			continue
		}
		r.compile()
		loc := r.re.FindStringSubmatchIndex(line)
		if loc == nil {
			continue
		}
		fields := map[string]string{}
		for j, name := range r.names {
			if a, b := loc[2*j], loc[2*j+1]; name != "" && a >= 0 && b > a {
				fields[name] = fieldValue(line, a, b)
			}
		}
		return Match{Pattern: &r.Pattern, Fields: fields, Start: loc[0]}, true
	}
	return Match{}, false
}

// fieldValue is the group line[a:b], except that a logfmt quoted value
// (key="0 B") is read whole to its closing quote and unquoted, whatever
// part of it the pattern's group (often \S+) covered.
func fieldValue(line string, a, b int) string {
	if line[a] != '"' || a == 0 || line[a-1] != '=' {
		return line[a:b]
	}
	for i := a + 1; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++ // an escaped character, possibly a quote
		case '"':
			if v, err := strconv.Unquote(line[a : i+1]); err == nil {
				return v
			}
			return line[a+1 : i]
		}
	}
	return line[a:b] // no closing quote: the line was cut; keep what matched
}

func (r *rule) prefilter(line string) bool {
	if r.Unless != "" && strings.Contains(line, r.Unless) {
		return false
	}
	if len(r.needles) == 0 {
		return true
	}
	for _, n := range r.needles {
		if strings.Contains(line, n) {
			return true
		}
	}
	return false
}

// maxEventLine bounds the raw line an event carries.
const maxEventLine = 4096

// Event turns a match into the model's event; line is the sanitized line.
func (mt Match) Event(t time.Time, endpoint, line string) *model.Event {
	p := mt.Pattern
	fields := make(map[string]string, len(mt.Fields)+2)
	for k, v := range mt.Fields {
		fields[k] = v
	}
	fields["hint"] = p.Meaning
	if p.Phase != "" {
		fields["phase"] = p.Phase
	}
	if len(p.Engines) > 0 {
		names := make([]string, len(p.Engines))
		for i, e := range p.Engines {
			names[i] = string(e)
		}
		fields["engines"] = strings.Join(names, ",")
	}
	return &model.Event{
		Time: t, Endpoint: endpoint, Source: "log", Kind: p.ID,
		Severity: p.Sev, Category: p.Category,
		Title:  expand(p.Title, mt.Fields),
		Line:   Cut(around(line, mt.Start), maxEventLine),
		Fields: fields,
	}
}

// expand fills {field} placeholders; an absent field's placeholder is
// dropped so the title still reads ("HTTP port already in use").
func expand(title string, fields map[string]string) string {
	if !strings.Contains(title, "{") {
		return title
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(title, '{')
		if i < 0 {
			b.WriteString(title)
			break
		}
		j := strings.IndexByte(title[i:], '}')
		if j < 0 {
			b.WriteString(title)
			break
		}
		b.WriteString(title[:i])
		b.WriteString(fields[title[i+1:i+j]])
		title = title[i+j+1:]
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// around keeps a long line's part from a little before the match, so the
// event shows the message rather than the line's preamble.
func around(line string, start int) string {
	const before = 200
	if len(line) <= maxEventLine || start < maxEventLine-before {
		return line
	}
	i := start - before
	for i > 0 && !utf8.RuneStart(line[i]) {
		i--
	}
	return "… " + line[i:]
}
