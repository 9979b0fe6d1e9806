package model

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Observation is one finished request's timings as its engine logged them
// (llama-server's print_timing lines, TGI's "Success" span, Ollama's access
// log line), in seconds. A latency absent from Values was not logged.
// Engines that publish no latency histogram log these per request, so the
// Store keeps them and gives exact windowed percentiles from them.
type Observation struct {
	Time   time.Time
	Values map[Latency]float64
	// Notes say what a value means where its name alone would claim more
	// (llama-server's "total time" excludes the wait for a slot). Shared
	// by a source's observations, not copied.
	Notes map[Latency]string `json:",omitempty"`
}

// LogObsCap bounds the observations kept per endpoint: 15 minutes at 9
// requests/s. Beyond it the window's oldest requests are dropped and the
// count says how many there are.
const LogObsCap = 8192

// obsRec is an Observation kept compactly: one slot per latency concept,
// NaN where the line did not log it.
type obsRec struct {
	t time.Time
	v [numLatencies]float64
}

const numLatencies = 7 // len(Latencies)

func latIndex(l Latency) int { return slices.Index(Latencies, l) }

// obsLog is one log series' observations of its current run (newRun
// clears it: a window never mixes two runs of an engine).
type obsLog struct {
	ring  *Ring[obsRec]
	seen  uint8 // bit i: Latencies[i] was logged in this run
	notes [numLatencies]string
}

func (o *obsLog) add(obs []Observation) {
	for _, ob := range obs {
		r := obsRec{t: ob.Time}
		for i := range r.v {
			r.v[i] = math.NaN()
		}
		kept := false
		for l, v := range ob.Values {
			// a negative, infinite or NaN timing is no request's
			if i := latIndex(l); i >= 0 && v >= 0 && !math.IsInf(v, 0) {
				r.v[i], kept = v, true
				o.seen |= 1 << i
				o.notes[i] = ob.Notes[l]
			}
		}
		if !kept {
			continue
		}
		if o.ring == nil {
			o.ring = NewRing[obsRec](LogObsCap)
		}
		o.ring.Push(r)
	}
}

func (o *obsLog) reset() {
	if o.ring != nil {
		o.ring.Reset()
	}
	o.seen, o.notes = 0, [numLatencies]string{}
}

// obsScratch holds the values dist sorts, kept from one read to the next.
var obsScratch = sync.Pool{New: func() any { return new([]float64) }}

// logApprox names where log-derived distributions come from.
const logApprox = "exact, from the engine's per-request log lines"

// dist returns l's exact distribution over the observations logged in
// (from, to]; ok is false when none logged l at all.
func (o *obsLog) dist(l Latency, from, to time.Time) (Dist, bool) {
	i := latIndex(l)
	if o.ring == nil || i < 0 || o.seen&(1<<i) == 0 {
		return Dist{}, false
	}
	// A read writes nothing of the store's: readers on several
	// goroutines may ask at once, each with its own scratch.
	buf := obsScratch.Get().(*[]float64)
	defer obsScratch.Put(buf)
	vals := (*buf)[:0]
	for j := o.ring.Len() - 1; j >= 0; j-- {
		r := o.ring.At(j)
		if math.IsNaN(r.v[i]) {
			continue
		}
		if !r.t.After(from) {
			break // observations arrive in line order; a late one is rare and bounded
		}
		if r.t.After(to) {
			continue
		}
		vals = append(vals, r.v[i])
	}
	*buf = vals
	d := Dist{Exposed: true, Source: FromLog, Count: float64(len(vals)), Window: to.Sub(from).Round(time.Millisecond), Approx: logApprox}
	if n := o.notes[i]; n != "" {
		d.Approx += "; " + n
	}
	if len(vals) == 0 {
		return d, true
	}
	slices.Sort(vals)
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	d.P50, d.P90, d.P99 = Some(exactQuantile(vals, 0.5)), Some(exactQuantile(vals, 0.9)), Some(exactQuantile(vals, 0.99))
	d.Mean = Some(sum / float64(len(vals)))
	return d, true
}

// count is how many requests were logged in (from, to].
func (o *obsLog) count(from, to time.Time) int {
	if o.ring == nil {
		return 0
	}
	n := 0
	for j := o.ring.Len() - 1; j >= 0; j-- {
		r := o.ring.At(j)
		if !r.t.After(from) {
			break
		}
		if !r.t.After(to) {
			n++
		}
	}
	return n
}

// exactQuantile is the q-quantile (0–1) of ascending values with numpy's
// linear interpolation (rank q·(n−1)), the benchmark's definition, so the
// two compare like for like.
func exactQuantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	rank := q * float64(n-1)
	lo := int(math.Floor(rank))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (sorted[lo+1]-sorted[lo])*(rank-float64(lo))
}
