// Package recording is llmtop's recording file: the stream of messages the
// monitor core received (scrapes with their samples, GPU readings, log
// lines, events, /proc's word on a port, benchmark results, the clock's
// ticks), each with its time, so that a later llmtop can feed them into a
// fresh core and see what the live one saw.
//
// The file is gzip-compressed JSON lines: a versioned header line, then one
// record per line. It is written append-only and flushed about once a
// second, so a crash loses at most the last second and leaves a torn last
// line, which the reader skips with a note. See docs/recording.md.
//
// This package does the file's I/O and its encoding; it imports model and
// diagnosis for their types only, never core or tui: the composition root
// (cmd/llmtop) tees the sources' messages into a Recorder and feeds a
// Reader's records to a core.
package recording

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// Version is the format this llmtop writes and the newest it reads.
const Version = 1

// magic is the header's key naming the format; its value is the version.
const magic = "llmtop_recording"

// Header is the file's first line: what was recorded, by whom and how.
type Header struct {
	// Version is the format's version (Version when written by this llmtop).
	Version int `json:"llmtop_recording"`
	// Llmtop is the version of the llmtop that wrote the file.
	Llmtop string `json:"llmtop"`
	// Face is what recorded: "monitor", "demo" or "diagnose"; it says how
	// the clock's ticks drove the core (docs/recording.md).
	Face      string    `json:"face"`
	Started   time.Time `json:"started"`
	Endpoints []string  `json:"endpoints"`
	Interval  Duration  `json:"interval"`
	Window    Duration  `json:"window"`
	// Diagnosis is the rules' configuration the recording was judged with.
	Diagnosis *diagnosis.Config `json:"diagnosis,omitempty"`
	Simulated bool              `json:"simulated,omitempty"`
	// Checkpoints says the file holds checkpoints of the core it replays
	// into (added with issue 33; an older reader ignores them).
	Checkpoints *Checkpoints `json:"checkpoints,omitempty"`
}

// Duration is a time.Duration written as Go's text ("1m0s") in the header.
type Duration time.Duration

// MarshalText writes the duration as text.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads "1m0s" or "1s".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// Tick is the clock: the face ran (or could run) the rules at this time.
type Tick struct{}

// Bench is a finished benchmark as the core takes it.
type Bench = model.BenchDone

// Scenario is the demo's running simulated scenario (the header's badge).
type Scenario struct {
	Name    string        `json:"name"`
	Elapsed time.Duration `json:"elapsed"`
	Length  time.Duration `json:"length"`
}

// Note is a remark the recorder itself wrote into the file: messages it
// had to drop, a write it could not do.
type Note struct {
	Text string `json:"text"`
}

// Record is one line of a recording: a message and when the core got it.
// Msg is one of model.Scrape, model.GPUSnapshot, model.LogLine,
// model.LogLines, model.Sample, model.Event, model.PortOwner, Bench,
// Scenario, Note or Tick.
type Record struct {
	Time time.Time
	Msg  any
}

// The kinds of record, as the "k" field names them.
const (
	kindScrape   = "scrape"
	kindGPU      = "gpu"
	kindLog      = "log"
	kindLogs     = "logs"
	kindSample   = "sample"
	kindEvent    = "event"
	kindPort     = "port"
	kindHost     = "host"
	kindLaunch   = "launch"
	kindBench    = "bench"
	kindScenario = "scenario"
	kindNote     = "note"
	kindTick     = "tick"
	kindOrigin   = "origin"
	kindProbe    = "probe"
	kindAck      = "ack"
	kindSilence  = "silence"
	kindWindow   = "window"
	kindBatch    = "batch"
	// kindCheckpoint is a checkpoint line: not a record, Next skips it.
	kindCheckpoint = "checkpoint"
)

// line is a record as written: t is Unix nanoseconds.
type line struct {
	T int64           `json:"t"`
	K string          `json:"k"`
	M json.RawMessage `json:"m,omitempty"`
}

// num is a float64 that survives JSON whatever its value: ±Inf (a
// histogram's last bucket) and NaN are written as strings.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func (n *num) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"+Inf"`:
		*n = num(math.Inf(1))
	case `"-Inf"`:
		*n = num(math.Inf(-1))
	case `"NaN"`:
		*n = num(math.NaN())
	default:
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return err
		}
		*n = num(f)
	}
	return nil
}

// wireScrape and wireSample keep every float exact (model.Opt rounds for
// people; counters need every digit for their rates) and write times as
// Unix nanoseconds.
type wireScrape struct {
	E   string              `json:"e"`
	T   int64               `json:"t"`
	D   int64               `json:"d,omitempty"` // took, ns
	ID  model.Identity      `json:"id"`
	S   []wireSample        `json:"s,omitempty"`
	Err string              `json:"err,omitempty"`
	EK  model.ScrapeErrKind `json:"ek,omitempty"`
	H   string              `json:"h,omitempty"`
}

type wireSample struct {
	E   string                     `json:"e,omitempty"`
	M   string                     `json:"m"`
	T   int64                      `json:"t"`
	Src model.Source               `json:"src,omitempty"`
	G   map[model.Gauge]num        `json:"g,omitempty"`
	C   map[model.Counter]num      `json:"c,omitempty"`
	L   map[model.Latency]wireHist `json:"l,omitempty"`
	F   map[string]num             `json:"f,omitempty"`
	St  int64                      `json:"st,omitempty"`
	I   map[string]string          `json:"i,omitempty"`
	N   []string                   `json:"n,omitempty"`
	// O: requests timed by the engine's log (added with issue 20; an
	// older reader ignores it).
	O []wireObs `json:"o,omitempty"`
	// Fr: the metric each concept was read from (Sample.From, issue 14
	// item 8), so a replay cites what the live run cited; an older reader
	// ignores it, and a recording without it cites the concepts.
	Fr map[string]string `json:"fr,omitempty"`
}

type wireObs struct {
	T int64                    `json:"t"`
	V map[model.Latency]num    `json:"v"`
	N map[model.Latency]string `json:"n,omitempty"`
}

type wireHist struct {
	B [][2]num   `json:"b,omitempty"` // [upper bound, cumulative count]
	S num        `json:"s"`
	C num        `json:"c"`
	A string     `json:"a,omitempty"`
	P []wireHist `json:"p,omitempty"`
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

func toWireScrape(sc model.Scrape) wireScrape {
	w := wireScrape{E: sc.Endpoint, T: unixNano(sc.Time), D: int64(sc.Took), ID: sc.Identity,
		Err: sc.Err, EK: sc.ErrKind, H: sc.Hint}
	for _, s := range sc.Samples {
		w.S = append(w.S, toWireSample(s))
	}
	return w
}

func (w wireScrape) scrape() model.Scrape {
	sc := model.Scrape{Endpoint: w.E, Time: fromUnixNano(w.T), Took: time.Duration(w.D), Identity: w.ID,
		Err: w.Err, ErrKind: w.EK, Hint: w.H}
	for _, s := range w.S {
		sc.Samples = append(sc.Samples, s.sample())
	}
	return sc
}

func toWireSample(s model.Sample) wireSample {
	w := wireSample{E: s.Endpoint, M: s.Model, T: unixNano(s.Time), Src: s.Source, St: unixNano(s.Started), I: s.Info, N: s.Notes, Fr: s.From}
	if len(s.Gauges) > 0 {
		w.G = make(map[model.Gauge]num, len(s.Gauges))
		for k, v := range s.Gauges {
			w.G[k] = num(v)
		}
	}
	if len(s.Counters) > 0 {
		w.C = make(map[model.Counter]num, len(s.Counters))
		for k, v := range s.Counters {
			w.C[k] = num(v)
		}
	}
	if len(s.Latencies) > 0 {
		w.L = make(map[model.Latency]wireHist, len(s.Latencies))
		for k, h := range s.Latencies {
			w.L[k] = toWireHist(h)
		}
	}
	if len(s.FinishReasons) > 0 {
		w.F = make(map[string]num, len(s.FinishReasons))
		for k, v := range s.FinishReasons {
			w.F[k] = num(v)
		}
	}
	for _, o := range s.Observations {
		wo := wireObs{T: unixNano(o.Time), V: make(map[model.Latency]num, len(o.Values)), N: o.Notes}
		for k, v := range o.Values {
			wo.V[k] = num(v)
		}
		w.O = append(w.O, wo)
	}
	return w
}

// sample rebuilds a Sample with every map allocated, as model.NewSample
// makes them (sources and the store may write into them).
func (w wireSample) sample() model.Sample {
	s := model.NewSample(w.E, w.M, fromUnixNano(w.T), w.Src)
	s.Started, s.Notes = fromUnixNano(w.St), w.N
	for k, v := range w.G {
		s.Gauges[k] = float64(v)
	}
	for k, v := range w.C {
		s.Counters[k] = float64(v)
	}
	for k, h := range w.L {
		s.Latencies[k] = h.hist()
	}
	for k, v := range w.F {
		s.FinishReasons[k] = float64(v)
	}
	for k, v := range w.I {
		s.Info[k] = v
	}
	if len(w.Fr) > 0 {
		s.From = make(map[string]string, len(w.Fr))
		for k, v := range w.Fr {
			s.From[k] = v
		}
	}
	for _, wo := range w.O {
		o := model.Observation{Time: fromUnixNano(wo.T), Values: make(map[model.Latency]float64, len(wo.V)), Notes: wo.N}
		for k, v := range wo.V {
			o.Values[k] = float64(v)
		}
		s.Observations = append(s.Observations, o)
	}
	return s
}

func toWireHist(h model.Histogram) wireHist {
	w := wireHist{S: num(h.Sum), C: num(h.Count), A: h.Approx}
	for _, b := range h.Buckets {
		w.B = append(w.B, [2]num{num(b.UpperBound), num(b.Count)})
	}
	for _, p := range h.Parts {
		w.P = append(w.P, toWireHist(p))
	}
	return w
}

func (w wireHist) hist() model.Histogram {
	h := model.Histogram{Sum: float64(w.S), Count: float64(w.C), Approx: w.A}
	for _, b := range w.B {
		h.Buckets = append(h.Buckets, model.Bucket{UpperBound: float64(b[0]), Count: float64(b[1])})
	}
	for _, p := range w.P {
		h.Parts = append(h.Parts, p.hist())
	}
	return h
}
