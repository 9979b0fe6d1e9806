package tui

import (
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// fleetRow is one endpoint+model in the fleet table, its cells formatted
// once per change of data (a frame only lays out the visible rows).
type fleetRow struct {
	key                     model.Key
	keyIndex                int // index into Data.ModelKeys(); -1 when it has no numbers
	name, engine, modelName string
	state                   string
	stateLevel              Level
	running, waiting, kv    model.Opt
	ttft, tpot, tps         model.Opt
	promptTPS               model.Opt // a prefill pool's heading says its members' work
	tpotIsITL               bool
	finding                 string
	findingLevel            Level
	sev                     model.Severity
	// role, layer and the pool they put the row in (fleet_topology.go);
	// xfer, reqs and young feed a decode pool's KV hand-over verdict.
	role          model.PDRole
	layer         string
	poolKey, pool string
	xfer          model.Dist
	reqs          model.Opt
	young         bool
	kvSent        bool   // its engine counts hand-overs on the prefill side only
	detail        string // a router's word on its engines (Identity.LayerDetail)
	tenants       bool   // the layer counts requests by tenant (Identity.Tenants)
	judged        bool   // the routing rules read its word (Backends, RouterQueue, Overhead)
	overhead      string // what it says of its own added latency (Identity.Overhead)
	text          string // lower-case text the filter searches
	cells         [fleetCols]string
	formatted     bool
}

// The fleet table's columns, in display order.
const (
	colName = iota
	colEngine
	colModel
	colState
	colRun
	colWait
	colKV
	colTTFT
	colTPOT
	colTPS
	colFinding
	fleetCols
)

type fleetCol struct {
	title    string
	min, max int // max 0: takes what is left
	prio     int // dropped lowest first when the screen is narrow
	right    bool
}

var fleetColumns = [fleetCols]fleetCol{
	colName:    {"NAME", 12, 28, 10, false},
	colEngine:  {"ENGINE", 8, 8, 3, false},
	colModel:   {"MODEL", 10, 24, 6, false},
	colState:   {"STATE", 7, 11, 9, false},
	colRun:     {"RUN", 4, 5, 8, true},
	colWait:    {"WAIT", 5, 6, 8, true},
	colKV:      {"KV", 4, 5, 8, true},
	colTTFT:    {"TTFT99", 7, 8, 7, true},
	colTPOT:    {"TPOT99", 7, 8, 5, true},
	colTPS:     {"TOK/S", 6, 7, 4, true},
	colFinding: {"TOP FINDING", 12, 0, 2, false},
}

// fleetState is a lifecycle in the table's words.
func fleetState(e *EndpointInfo) (string, Level) {
	if e == nil {
		return "unknown", LevelNone
	}
	if e.Origin != nil && e.Origin.Gone {
		return "gone", LevelNone // scaled down or dropped: not an outage
	}
	switch e.Life {
	case model.LifeServing:
		if e.Err != "" {
			// It answers but its metrics do not read (llama-server without
			// --metrics): the header's DEGRADED, not stale (no scrape for
			// three intervals), which it never was.
			return "degraded", LevelWarn
		}
		return "serving", LevelOK
	case model.LifeStarting:
		return "starting", LevelWarn
	case model.LifeUnreachable, model.LifeCrashed, model.LifeStopped:
		return string(e.Life), LevelCrit
	}
	return string(e.Life), LevelNone
}

// buildFleetRows reads every endpoint+model from the core (and the
// endpoints without numbers, a gone or never-answering one) with the most
// severe open finding of each, all of them built anew.
func buildFleetRows(d *Data) []fleetRow {
	var c fleetRowCache
	return c.build(d, nil)
}

// fleetRowCache keeps each row with what it was built from, so that a
// refresh builds again only the rows whose inputs moved: at a fleet's
// steady refresh one replica in twenty reads new numbers, and building all
// 2 000 rows was a fifth of the screen's cost.
type fleetRowCache struct {
	byKey map[model.Key]*keptRow
	pass  uint64
	seen  map[string]bool // endpoints with a key, reused
	top   map[string]*diagnosis.Finding
}

// keptRow is a row and what it was built from.
type keptRow struct {
	in   rowInput
	row  fleetRow
	pass uint64
	kept bool // kept at the last build, not built again
}

// rowInput is everything a row reads but its endpoint's store State, for
// which its mark stands (model.Store.StateMark: it moves when what the
// State reads does, and at every sample when the State has windows), and
// the clock (young, read again while a row is).
type rowInput struct {
	keyIndex     int
	stateMark    uint64
	window       time.Duration
	e            *EndpointInfo
	name, model0 string
	engine       model.Engine
	role         model.PDRole
	life         model.Lifecycle
	err          string
	gone         bool
	finding      *diagnosis.Finding
	title        string
	sev          model.Severity
}

// inputOf is what row k reads, and whether it can be kept at all (a
// router's row reads its backends, queues and overhead: built every time).
func inputOf(d *Data, k model.Key, i int, f *diagnosis.Finding) (rowInput, bool) {
	e := d.Info(k.Endpoint)
	in := rowInput{keyIndex: i, window: d.Window, e: e, finding: f}
	if f != nil {
		in.title, in.sev = findingCell(f), f.Severity
	}
	if e == nil {
		return in, true
	}
	if e.Identity.Layer != "" {
		return in, false
	}
	in.name, in.engine, in.role, in.life, in.err = e.Name(), e.Identity.Engine, e.Identity.Role, e.Life, e.Err
	in.gone = e.Origin != nil && e.Origin.Gone
	if len(e.Identity.Models) > 0 {
		in.model0 = e.Identity.Models[0].ID
	}
	if i >= 0 {
		in.stateMark = d.Store.StateMark(k)
	}
	return in, true
}

// build is the table's rows, those whose inputs read as when they were
// last built kept (none when c is new): equal to buildFleetRows
// (TestFleetRowsKeptEqualBuildingFromScratch). dst's memory is reused.
func (c *fleetRowCache) build(d *Data, dst []fleetRow) []fleetRow {
	if c.byKey == nil {
		c.byKey, c.seen, c.top = map[model.Key]*keptRow{}, map[string]bool{}, map[string]*diagnosis.Finding{}
	}
	c.pass++
	// by reference into the report: a finding stored in a map is
	// allocated apart, one per finding per frame
	fs := d.Core.Report().Findings
	top := c.top
	clear(top)
	for i := range fs {
		f := &fs[i]
		if f.Endpoint == "" || !f.Active() {
			continue
		}
		if t, ok := top[f.Endpoint]; !ok || f.Severity > t.Severity {
			top[f.Endpoint] = f
		}
		for _, u := range f.Others { // a pool's idle workers, each on its row
			if t, ok := top[u]; !ok || f.Severity > t.Severity {
				top[u] = f
			}
		}
	}
	// a condition holding but not open yet stands on a row with no open
	// finding: its dash read as a clean bill the rules had not given
	ps := d.Core.Report().Pending
	for i := range ps {
		f := &ps[i].Finding
		if f.Endpoint == "" {
			continue
		}
		if t, ok := top[f.Endpoint]; !ok || (t.Opened.IsZero() && f.Severity > t.Severity) {
			top[f.Endpoint] = f
		}
	}
	keys := d.ModelKeys()
	rows := dst[:0]
	seen := c.seen
	clear(seen)
	for i, k := range keys {
		seen[k.Endpoint] = true
		rows = append(rows, c.row(d, k, i, top))
	}
	for _, u := range d.Endpoints() {
		if !seen[u] {
			rows = append(rows, c.row(d, model.Key{Endpoint: u}, -1, top))
		}
	}
	if len(c.byKey) > len(rows) {
		for k, r := range c.byKey {
			if r.pass != c.pass {
				delete(c.byKey, k) // its row is gone
			}
		}
	}
	clear(top) // nothing of the report held past the build
	return rows
}

// row is row k, kept when its inputs read as when it was built.
func (c *fleetRowCache) row(d *Data, k model.Key, i int, top map[string]*diagnosis.Finding) fleetRow {
	in, keep := inputOf(d, k, i, top[k.Endpoint])
	r := c.byKey[k]
	if r != nil && r.pass == c.pass {
		keep = false // the same key twice: built, not kept
	}
	in.finding = nil // compared by what it says: the report is new every time
	if keep && r != nil && r.in == in {
		if r.row.young {
			// the one thing the clock moves: its run may have grown
			// older than the window since
			st := d.Store.State(k, d.Window)
			r.row.young = st.Time.Sub(st.RunStart) < d.Window
		}
		r.pass, r.kept = c.pass, true
		return r.row
	}
	row := fleetRowOf(d, k, i, top)
	if keep {
		if r == nil {
			r = &keptRow{}
			c.byKey[k] = r
		}
		r.in, r.row, r.pass, r.kept = in, row, c.pass, false
	}
	return row
}

func fleetRowOf(d *Data, k model.Key, i int, top map[string]*diagnosis.Finding) fleetRow {
	e := d.Info(k.Endpoint)
	r := fleetRow{key: k, keyIndex: i, name: model.Clean(e.Name()), modelName: k.Model}
	if e != nil {
		r.engine = string(e.Identity.Engine)
		r.role, r.layer = e.Identity.Role, model.Clean(e.Identity.Layer)
		if r.modelName == "" && len(e.Identity.Models) > 0 {
			r.modelName = e.Identity.Models[0].ID
		}
	}
	r.state, r.stateLevel = fleetState(e)
	if r.layer != "" {
		if r.state != "gone" {
			r.state, r.stateLevel = "router", LevelNone
		}
		r.engine = ""
		if i := strings.Index(r.layer, " ("); i > 0 {
			r.modelName = r.layer[:i]
		}
		r.detail = model.Clean(e.Identity.LayerDetail)
		r.tenants = len(e.Identity.Tenants) > 0
		r.judged = len(e.Identity.Backends) > 0 || len(e.Identity.RouterQueue) > 0 ||
			(e.Identity.Overhead != nil && e.Identity.Overhead.Missing == "")
		r.overhead = overheadText(e.Identity.Overhead)
		r.finding = joinNonEmpty(" · ", r.detail, r.overhead) // in the finding's column unless a finding is on it
	}
	if i >= 0 && r.state != "gone" && e != nil {
		st := d.Store.State(k, d.Window)
		r.xfer, r.reqs = st.Latency[model.KVTransfer], st.RequestsPS
		if sp := engines.Of(e.Identity.Engine); sp != nil {
			r.kvSent = sp.KVSentSide
		}
		r.young = !st.RunStart.IsZero() && st.Time.Sub(st.RunStart) < d.Window
		r.running, r.waiting, r.kv, r.tps, r.promptTPS = st.Running, st.Waiting, st.KVUsage, st.GenTPS, st.PromptTPS
		r.ttft = st.Latency[model.TTFT].P99
		r.tpot = st.Latency[model.TPOT].P99
		if !r.tpot.OK {
			if itl := st.Latency[model.ITL].P99; itl.OK {
				r.tpot, r.tpotIsITL = itl, true
			}
		}
	}
	if f, ok := top[k.Endpoint]; ok {
		r.finding, r.sev = findingCell(f), f.Severity
		r.findingLevel = LevelWarn
		if f.Severity >= model.SevCrit && !f.Opened.IsZero() {
			r.findingLevel = LevelCrit
		}
	}
	r.modelName = model.Clean(r.modelName)
	r.finding = model.Clean(r.finding)
	r.poolKey, r.pool = poolOf(&r)
	// the pool heading's words too: "/decode" found only the worker whose
	// finding said "decode", not the decode pool
	r.text = strings.ToLower(r.name + " " + r.engine + " " + r.modelName + " " + r.state + " " + r.finding + " " + k.Endpoint + " " + string(r.role) + " " + r.layer)
	return r
}

// findingCell is what the TOP FINDING column says of f: a condition not
// open yet (a Pending's, Opened zero) is "forming: …", as the Diagnosis
// pane says it.
func findingCell(f *diagnosis.Finding) string {
	if f.Opened.IsZero() {
		return "forming: " + f.Title
	}
	return f.Title
}

// format fills the row's cells; only the rows on screen are formatted
// (a 500-row fleet shows 50 at most).
func (r *fleetRow) format() {
	if r.formatted {
		return
	}
	r.formatted = true
	tpot := fmtSec(r.tpot)
	if r.tpotIsITL {
		tpot += "ⁱ"
	}
	r.cells = [fleetCols]string{
		colName: r.name, colEngine: r.engine, colModel: r.modelName, colState: r.state,
		colRun: fmtNum(r.running), colWait: fmtNum(r.waiting), colKV: fmtPct(r.kv),
		colTTFT: fmtSec(r.ttft), colTPOT: tpot, colTPS: fmtNum(r.tps), colFinding: r.finding,
	}
	if r.finding == "" {
		r.cells[colFinding] = "—"
	}
}

// fleetSortKeys are the columns the table sorts by, in the order `o`
// steps through them.
var fleetSortKeys = []int{colName, colState, colWait, colKV, colTTFT, colTPOT, colTPS, colFinding, colModel}

// less orders two rows by column c; an unknown value sorts last whichever
// the direction, so "--" never poses as the smallest.
func (a *fleetRow) value(c int) (model.Opt, string) {
	switch c {
	case colRun:
		return a.running, ""
	case colWait:
		return a.waiting, ""
	case colKV:
		return a.kv, ""
	case colTTFT:
		return a.ttft, ""
	case colTPOT:
		return a.tpot, ""
	case colTPS:
		return a.tps, ""
	case colFinding:
		return model.Some(float64(a.sev)), ""
	case colState:
		return model.Some(float64(a.stateLevel)), ""
	case colModel:
		return model.None, a.modelName + "\x00" + a.name
	}
	return model.None, a.name
}

func sortFleet(rows []fleetRow, col int, desc bool) {
	sort.SliceStable(rows, func(i, j int) bool {
		vi, si := rows[i].value(col)
		vj, sj := rows[j].value(col)
		if si != "" || sj != "" || (!vi.OK && !vj.OK) {
			if si == sj {
				return rows[i].name < rows[j].name
			}
			if desc {
				return si > sj
			}
			return si < sj
		}
		switch {
		case vi.OK != vj.OK:
			return vi.OK // unknown last
		case vi.V == vj.V:
			return rows[i].name < rows[j].name
		case desc:
			return vi.V > vj.V
		}
		return vi.V < vj.V
	})
}

// layoutFleet picks the columns that fit in w cells and their widths.
func layoutFleet(w int) ([]int, [fleetCols]int) {
	on := make([]bool, fleetCols)
	for i := range on {
		on[i] = true
	}
	need := func() int {
		n := 0
		for i, c := range fleetColumns {
			if on[i] {
				n += c.min + 1
			}
		}
		return n - 1
	}
	for need() > w {
		low := -1
		for i, c := range fleetColumns {
			if on[i] && i != colName && (low < 0 || c.prio < fleetColumns[low].prio) {
				low = i
			}
		}
		if low < 0 {
			break
		}
		on[low] = false
	}
	var widths [fleetCols]int
	var cols []int
	for i, c := range fleetColumns {
		if on[i] {
			cols = append(cols, i)
			widths[i] = c.min
		}
	}
	left := w - need()
	for _, i := range []int{colName, colModel, colState, colRun, colWait, colKV, colTTFT, colTPOT, colTPS, colEngine} {
		if !on[i] || left <= 0 {
			continue
		}
		add := min(left, fleetColumns[i].max-widths[i])
		if i == colName || i == colModel {
			add = min(add, max(0, left/3)) // the finding gets the rest
		}
		widths[i] += add
		left -= add
	}
	if on[colFinding] {
		widths[colFinding] += left
	} else if left > 0 {
		widths[colName] += left
	}
	return cols, widths
}
