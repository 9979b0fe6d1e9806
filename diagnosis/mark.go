package diagnosis

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"time"

	"github.com/llmtop/llmtop/model"
)

// markSeed seeds the marks' hash: a mark is only ever compared with
// another of the same process.
var markSeed = maphash.MakeSeed()

// MarkOf is ep's Mark (Endpoint.Mark): a hash of everything in it that the
// rules read, but State and Log, which the caller's marks stand for (state
// and log: model.Store.StateMark of their keys), and the clock's own
// fields, which move at every refresh of a steady endpoint (State.Time and
// Samples, Scrape.Time and Took, LastOK but whether it is zero, the
// current run's Summary but whether it counts samples): a rule reads those
// only beside the clock (env.now), and a verdict that read the clock is
// not kept. Batch is left out too: it slides with every refresh, and a
// verdict that read it (env.batch) is kept while it reads the same
// (batchMark). Before and UpSince are the Diagnoser's own, and it compares
// them itself. An endpoint with parts too rare to be worth hashing (a
// router's backends and queues, the host's reading, a port's owner, a
// run's benchmarks or probe) has the mark zero: judged every time.
func MarkOf(ep *Endpoint, state, log uint64) uint64 {
	id := &ep.Identity
	if ep.Host != nil || len(ep.Trend) > 0 || ep.Port != nil || len(id.Backends) > 0 || len(id.RouterQueue) > 0 ||
		id.LoadRange != nil || id.Overhead != nil || len(id.Tenants) > 0 || len(ep.Scrape.Samples) > 0 {
		return 0
	}
	var h marker
	h.h.SetSeed(markSeed)
	h.u64(state)
	h.u64(log)
	h.str(ep.URL)
	h.identity(id)
	h.identity(&ep.Scrape.Identity)
	h.str(ep.Scrape.Endpoint)
	h.str(ep.Scrape.Err)
	h.str(string(ep.Scrape.ErrKind))
	h.str(ep.Scrape.Hint)
	h.flag(ep.LastOK.IsZero())
	h.flag(ep.State.Samples > 0)
	h.flag(ep.Log.Samples > 0)
	// the window asked for: a window-free State is the same over any but
	// for this, and the state mark does not move when the window does
	h.u64(uint64(ep.State.Window))
	h.u64(uint64(ep.Log.Window))
	h.str(string(ep.Life))
	h.time(ep.LifeSince)
	h.str(ep.LifeDetail)
	h.u64(uint64(len(ep.Runs)))
	for i := range ep.Runs {
		r := &ep.Runs[i]
		if len(r.Benches) > 0 || r.Behaviour != nil {
			return 0
		}
		h.run(r, i == len(ep.Runs)-1 && r.Ended == nil)
	}
	if m := h.h.Sum64(); m != 0 {
		return m
	}
	return 1
}

// marker hashes a mark's parts, each ended so that no two sequences of
// parts read alike.
type marker struct {
	h   maphash.Hash
	buf [8]byte
}

func (h *marker) u64(v uint64) {
	binary.LittleEndian.PutUint64(h.buf[:], v)
	h.h.Write(h.buf[:])
}

func (h *marker) str(s string) {
	h.u64(uint64(len(s)))
	h.h.WriteString(s)
}

func (h *marker) f64(v float64) { h.u64(math.Float64bits(v)) }

func (h *marker) flag(b bool) {
	if b {
		h.h.WriteByte(1)
	} else {
		h.h.WriteByte(0)
	}
}

func (h *marker) time(t time.Time) {
	if t.IsZero() {
		h.u64(0)
		return
	}
	h.u64(uint64(t.UnixNano()))
}

func (h *marker) opt(o model.Opt) {
	h.flag(o.OK)
	h.f64(o.V)
}

// strs hashes a map whatever its order: each entry's own hash, summed.
func (h *marker) strs(m map[string]string) {
	var sum uint64
	for k, v := range m {
		sum += maphash.String(markSeed, k) ^ (maphash.String(markSeed, v) * 31)
	}
	h.u64(uint64(len(m)))
	h.u64(sum)
}

func (h *marker) identity(id *model.Identity) {
	h.str(string(id.Engine))
	h.str(id.Version)
	h.u64(uint64(len(id.Models)))
	for _, m := range id.Models {
		h.str(m.ID)
		h.u64(uint64(m.MaxContext))
		h.strs(m.Extra)
	}
	h.str(string(id.Health))
	h.str(id.HealthDetail)
	h.flag(id.Simulated)
	h.str(string(id.Role))
	h.str(id.RoleFrom)
	h.str(id.Via)
	h.str(id.Layer)
	h.str(id.LayerDetail)
}

// run hashes a run of the ledger; current is the run still going, whose
// Summary the core works out again at every refresh.
func (h *marker) run(r *model.Run, current bool) {
	h.u64(uint64(r.N))
	h.time(r.Started)
	if r.Ended != nil {
		h.time(*r.Ended)
	} else {
		h.u64(1)
	}
	h.str(string(r.End))
	h.str(r.StartedBy)
	h.str(r.EndReason)
	h.str(r.EndLine)
	h.flag(r.EndGuessed)
	h.str(string(r.Engine))
	h.str(r.Version)
	h.u64(uint64(len(r.Models)))
	for _, m := range r.Models {
		h.str(m)
	}
	h.strs(r.Config)
	h.str(r.Applied)
	s := &r.Summary
	h.flag(s.Samples > 0)
	if current {
		return // its summary moves with every refresh
	}
	h.u64(uint64(s.Samples))
	for _, o := range [...]model.Opt{s.RequestsPS, s.OfferedPS, s.GenTPS, s.PromptTPS, s.TTFTp50ms, s.TTFTp99ms,
		s.TPOTp50ms, s.TPOTp99ms, s.ITLp50ms, s.ITLp99ms, s.KVPeak, s.Preemptions, s.WaitingPeak, s.RunningPeak, s.SpecAccept} {
		h.opt(o)
	}
	h.f64(s.ServedS)
	h.f64(s.WindowS)
}

// batchMark is a hash of ep's running/latency pairs (never zero).
func batchMark(b []BatchPoint) uint64 {
	var h marker
	h.h.SetSeed(markSeed)
	h.u64(uint64(len(b)))
	for _, p := range b {
		h.f64(p.Running)
		h.f64(p.ITL)
	}
	return h.h.Sum64() | 1
}
