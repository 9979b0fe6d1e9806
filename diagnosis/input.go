package diagnosis

import (
	"sort"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Input is everything the rules look at for one evaluation. Absent inputs are
// nil/empty: the rules that need them stay silent and the report says which
// inputs were missing.
type Input struct {
	Time      time.Time
	Endpoints []Endpoint
	// GPU is the newest GPU snapshot; nil when no GPU source runs.
	GPU *model.GPUSnapshot
	// NoGPU says why the GPU source found no GPU on this machine ("" when
	// it found some, or none runs): an engine on this machine then runs
	// on its CPU.
	NoGPU string
	// Events are recent events (log patterns, restarts, lost GPUs). LogsOn
	// says a log source is attached, so "no events" means "nothing wrong".
	Events []model.Event
	LogsOn bool
	// Bench is the newest benchmark result, nil when none ran.
	Bench *Bench
	// OwnLength is, by endpoint URL, how many of the requests that
	// finished in the window llmtop's own benchmark sent with ignore_eos:
	// they run to max_tokens by design, so their finish reason "length"
	// says nothing of the clients' caps or the chat template, and the
	// finish_length rule leaves them out.
	OwnLength map[string]float64
}

// Endpoint is one watched endpoint+model.
type Endpoint struct {
	URL      string
	Identity model.Identity
	// Scrape is the newest poll's outcome (Err/ErrKind/Hint); Time zero when
	// the endpoint was never polled.
	Scrape model.Scrape
	// LastOK is when a scrape last produced metrics (zero: never).
	LastOK time.Time
	// State is the endpoint's picture over the window; Samples == 0 when
	// nothing was read.
	State model.State
	// Batch pairs the running batch size with the ITL (or TPOT) seen at
	// that refresh, oldest first: the decode knee is read from it.
	Batch []BatchPoint
	// Before is the picture just before the newest restart, kept by the
	// Diagnoser to compare releases; nil when there was none.
	Before *Baseline
	// UpSince is when the endpoint last came up after being seen down (set
	// by the Diagnoser); zero when it was never seen down.
	UpSince time.Time
	// Life is where the engine is in its life (the core's lifecycle:
	// starting, serving, stopping, stopped, crashed, unreachable), since
	// LifeSince; LifeDetail says more (the start-up phases, the shutdown or
	// crash line). Empty when no core tracks it.
	Life       model.Lifecycle
	LifeSince  time.Time
	LifeDetail string
	// Port is /proc's word on the port while nothing answers (local only).
	Port *model.PortOwner
	// Runs is the endpoint's run ledger, oldest first; the last is the
	// current run. Nil when no core keeps one.
	Runs []model.Run
	// Host is the newest reading of the machine around the engine (its
	// processes and threads, memory, cgroup, /dev/shm, disks); nil when
	// the endpoint is not local or no host source runs. Trend is each of
	// its processes' RSS and VRAM over the run, one point per 30 s.
	Host  *model.HostReading
	Trend []MemTrend
	// Log is the picture from the engine's log stats lines alone, kept
	// beside a scraped State to cross-check the two; Samples == 0 when no
	// stats line was read or State itself comes from the log.
	Log model.State
	// Mark moves whenever anything above changes but the clock's own
	// fields (State.Time and State.Samples, Scrape.Time and Took, LastOK
	// but whether it is zero, the current run's Summary but whether it
	// counts samples) and Batch: MarkOf works it out. The Diagnoser keeps its
	// verdicts on an endpoint while its Mark stands (kept.go); zero is
	// unknown, and the endpoint is judged at every Update.
	Mark uint64
}

// isDown reports whether the newest poll found nothing listening.
func (e *Endpoint) isDown() bool {
	k := e.Scrape.ErrKind
	return k == model.ErrRefused || k == model.ErrTimeout || k == model.ErrUnreachable || e.Identity.Health == model.HealthDown
}

// MemTrend is one engine process's memory over its life: RSS from
// /proc, VRAM from the GPU's process list (points absent when unread).
type MemTrend struct {
	PID   int
	Name  string
	Front bool
	RSS   []model.Point
	VRAM  []model.Point
}

// BatchPoint is one refresh's running batch and per-token latency (seconds).
type BatchPoint struct {
	Running float64
	ITL     float64
}

// Baseline is what an endpoint looked like over a stretch of time, to compare
// before and after a restart.
type Baseline struct {
	Time     time.Time
	Version  string
	Model    string
	Info     map[string]string
	Running  model.Opt
	TTFT     model.Opt // p50, seconds
	ITL      model.Opt // p50, seconds
	GenTPS   model.Opt
	Requests float64 // requests the latencies cover
}

// Bench is a finished benchmark's numbers (model.Bench): the rules read it.
type Bench = model.Bench

// Engine returns the endpoint's engine (Triton folds into TensorRT-LLM: the
// same flags apply).
func (e *Endpoint) Engine() model.Engine {
	if e.Identity.Engine == model.Triton {
		return model.TRTLLM
	}
	return e.Identity.Engine
}

// Model returns the served model's name.
func (e *Endpoint) Model() string {
	if e.State.Key.Model != "" {
		return e.State.Key.Model
	}
	if len(e.Identity.Models) > 0 {
		return e.Identity.Models[0].ID
	}
	return ""
}

// BatchFromSeries pairs the store's running and per-token latency series by
// time (points within half a refresh of each other): the TUI and the
// diagnose command call it with Store.Series(k, "running") and
// Store.Series(k, "itl_mean") (or "tpot_mean").
func BatchFromSeries(running, itl []model.Point) []BatchPoint {
	return AppendBatch(nil, running, itl)
}

// AppendBatch is BatchFromSeries appending to dst.
func AppendBatch(dst []BatchPoint, running, itl []model.Point) []BatchPoint {
	out, _ := appendPairs(dst, nil, running, itl)
	return out
}

// appendPairs pairs running with itl onto dst, and each pair's time onto
// at when at is not nil.
func appendPairs(dst []BatchPoint, at []time.Time, running, itl []model.Point) ([]BatchPoint, []time.Time) {
	j := 0
	for _, r := range running {
		if !r.OK {
			continue
		}
		for j < len(itl) && itl[j].T.Before(r.T) {
			j++
		}
		if j < len(itl) && itl[j].T.Equal(r.T) && itl[j].OK {
			dst = append(dst, BatchPoint{Running: r.V, ITL: itl[j].V})
			if at != nil {
				at = append(at, r.T)
			}
		}
	}
	return dst, at
}

// EndpointFromStore builds an Endpoint from a store: the state over window,
// the batch/latency pairs for the knee, and the newest scrape.
func EndpointFromStore(s *model.Store, k model.Key, id model.Identity, last model.Scrape, lastOK time.Time, window time.Duration) Endpoint {
	return EndpointFromStoreBuf(s, k, id, last, lastOK, window, &SeriesBuf{})
}

// SeriesBuf holds the series an Endpoint is built from, for a caller that
// builds the same endpoint every refresh: each build reads only the points
// that changed since the one before (its Batch is valid until the next
// build with the same buffer).
type SeriesBuf struct {
	running, itl model.RunCursor
	batch        []BatchPoint
	at           []time.Time // each pair's time
}

// EndpointFromStoreBuf is EndpointFromStore reusing buf's memory and what
// it read before.
func EndpointFromStoreBuf(s *model.Store, k model.Key, id model.Identity, last model.Scrape, lastOK time.Time, window time.Duration, buf *SeriesBuf) Endpoint {
	var ep Endpoint
	FillFromStore(&ep, s, k, id, last, lastOK, window, buf)
	return ep
}

// FillFromStore is EndpointFromStoreBuf into *ep, whatever it held: a
// caller that keeps its endpoints in a slice builds each in place (an
// Endpoint is 2.5 KB, a fleet's thousands were copied twice a refresh).
func FillFromStore(ep *Endpoint, s *model.Store, k model.Key, id model.Identity, last model.Scrape, lastOK time.Time, window time.Duration, buf *SeriesBuf) {
	*ep = Endpoint{URL: k.Endpoint, Identity: id, Scrape: last, LastOK: lastOK}
	ep.State = s.State(k, window)
	lat := model.ITL
	if !ep.State.Latency[lat].Exposed {
		lat = model.TPOT
	}
	// The knee's pairs come from the current run only.
	ep.Batch = buf.follow(s, k, lat)
	if ep.State.Source == model.FromScrape {
		// A log's samples carry no model name: try the endpoint's nameless key too.
		ep.Log = s.StateFrom(k, model.FromLog, window)
		if ep.Log.Samples == 0 && k.Model != "" {
			ep.Log = s.StateFrom(model.Key{Endpoint: k.Endpoint}, model.FromLog, window)
		}
	}
}

// follow brings the running/latency pairs up to date: the pairs of points
// that stand are kept, those of points the rings let go are dropped, and
// only the points that changed are paired again.
func (buf *SeriesBuf) follow(s *model.Store, k model.Key, lat model.Latency) []BatchPoint {
	cr := s.FollowRunSeries(&buf.running, k, string(model.Running))
	ci := s.FollowRunSeries(&buf.itl, k, string(lat)+model.SeriesLatencyMean)
	run, itl := buf.running.Points, buf.itl.Points
	if cr.IsZero() || ci.IsZero() || len(run) == 0 || len(itl) == 0 {
		if buf.at == nil {
			buf.at = make([]time.Time, 0, len(run)) // not nil: the pairs' times are kept
		}
		buf.batch, buf.at = appendPairs(buf.batch[:0], buf.at[:0], run, itl)
		return buf.batch
	}
	cut := cr // from here on a pair's points may have changed
	if ci.Before(cut) {
		cut = ci
	}
	oldest := run[0].T
	if itl[0].T.After(oldest) {
		oldest = itl[0].T
	}
	lo := 0
	if len(buf.at) > 0 && buf.at[0].Before(oldest) {
		lo = sort.Search(len(buf.at), func(i int) bool { return !buf.at[i].Before(oldest) })
	}
	// what changed is the newest few: the cut is found from the end (a
	// search from the middle read a fleet's every ring again)
	hi := max(lo, fromEnd(len(buf.at), func(i int) bool { return !buf.at[i].Before(cut) }))
	// sliced, not moved: the slices' next growth copies only what is kept
	buf.batch, buf.at = buf.batch[lo:hi], buf.at[lo:hi]
	ri := fromEnd(len(run), func(i int) bool { return !run[i].T.Before(cut) })
	ii := fromEnd(len(itl), func(i int) bool { return !itl[i].T.Before(cut) })
	buf.batch, buf.at = appendPairs(buf.batch, buf.at, run[ri:], itl[ii:])
	return buf.batch
}

// fromEnd is sort.Search(n, f) searched from the end: the smallest i
// with f(i) true, f false before it and true from it on, where few are
// true.
func fromEnd(n int, f func(int) bool) int {
	for n > 0 && f(n-1) {
		n--
	}
	return n
}
