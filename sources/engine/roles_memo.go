package engine

import (
	"hash/maphash"
	"slices"

	"github.com/llmtop/llmtop/engines"
)

// roleMemo is a session's last classifyRole answer that said "an engine",
// with what it was drawn from: the families' names and what every layer
// that reuses engine names finds of its labels (shadowEvidence). A layer's
// evidence is its own families' names or those labels, so while both are
// the same the answer is too: a steady scrape is not classified again
// (every layer's families looked up in every family's name, 1.6 % of the
// monitor's CPU). A serving layer's answer is not kept (its Counted and
// Twins are read from the families' samples and HELP).
type roleMemo struct {
	ok     bool
	names  uint64 // namesKey
	n      int
	shadow []string
	r      role // Counted left out: it is the families of the scrape
}

var roleSeed = maphash.MakeSeed()

// namesKey sums a hash of each family's name: the same for the same names
// in any order.
func namesKey(f families) uint64 {
	var k uint64
	for name := range f {
		k += maphash.String(roleSeed, name)
	}
	return k
}

// shadows is shadowEvidence for every layer that reuses engine names, in
// engines.Layers' order, appended to buf.
func shadows(f families, buf []string) []string {
	for _, l := range engines.Layers() {
		if l.Shadow != nil {
			buf = append(buf, shadowEvidence(l, f))
		}
	}
	return buf
}

// classify is classifyRole(f), the kept answer where f's names and shadow
// evidence are the last answer's.
func (m *roleMemo) classify(f families) role {
	k := namesKey(f)
	sh := shadows(f, nil)
	if m.ok && m.names == k && m.n == len(f) && slices.Equal(m.shadow, sh) {
		r := m.r
		r.Counted = f
		return r
	}
	r := classifyRole(f)
	*m = roleMemo{}
	if r.Role == engines.RoleEngine && r.Layer == nil && r.Twins == nil {
		*m = roleMemo{ok: true, names: k, n: len(f), shadow: sh, r: r}
		m.r.Counted = nil
	}
	return r
}
