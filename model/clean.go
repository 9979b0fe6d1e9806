package model

import "math"

// The sources hand llmtop outside text in these shapes; each is cleaned once,
// where it enters (the engine poller, the GPU source), so every face — the
// TUI, snapshot, diagnose, saved files — draws only safe text.

// CleanScrape returns sc with every string an endpoint wrote cleaned: the
// identity (version, model ids and their facts, health detail), each
// sample's model, info, notes and finish-reason labels, and the error and
// hint (which quote URLs: those are redacted too).
func CleanScrape(sc Scrape) Scrape {
	sc.Identity = CleanIdentity(sc.Identity)
	sc.Err, sc.Hint = RedactText(sc.Err), RedactText(sc.Hint)
	if len(sc.Samples) > 0 {
		out := make([]Sample, len(sc.Samples))
		for i, s := range sc.Samples {
			s.Model = Clean(s.Model)
			s.Info = CleanMap(s.Info, Clean)
			if s.Notes != nil {
				s.Notes = CleanAll(append(make([]string, 0, len(s.Notes)), s.Notes...))
			}
			s.FinishReasons = CleanMap(s.FinishReasons, nil)
			if s.From != nil {
				s.From = CleanMap(s.From, Clean)
			}
			if s.Engines != nil {
				es := make([]EngineShare, len(s.Engines))
				for j, e := range s.Engines {
					e.ID = Clean(e.ID)
					es[j] = e
				}
				s.Engines = es
			}
			if s.LoRA != nil {
				l := *s.LoRA
				l.Running = CleanAll(append([]string(nil), l.Running...))
				l.Waiting = CleanAll(append([]string(nil), l.Waiting...))
				s.LoRA = &l
			}
			if len(s.Latencies) > 0 {
				ls := make(map[Latency]Histogram, len(s.Latencies))
				for k, h := range s.Latencies {
					h.Approx = Clean(h.Approx)
					ls[k] = h
				}
				s.Latencies = ls
			}
			out[i] = s
		}
		sc.Samples = out
	}
	return sc
}

// CleanIdentity cleans what an endpoint says about itself.
func CleanIdentity(id Identity) Identity {
	id.Version = Clean(id.Version)
	id.HealthDetail = RedactText(id.HealthDetail)
	id.RoleFrom, id.Via, id.Layer, id.LayerDetail = Clean(id.RoleFrom), Clean(id.Via), Clean(id.Layer), Clean(id.LayerDetail)
	if len(id.Backends) > 0 {
		bs := make([]Backend, len(id.Backends))
		for i, b := range id.Backends {
			b.Server, b.Breaker, b.From = RedactText(b.Server), Clean(b.Breaker), Clean(b.From)
			bs[i] = b
		}
		id.Backends = bs
	}
	if id.LoadRange != nil {
		lr := *id.LoadRange
		lr.From = Clean(lr.From)
		id.LoadRange = &lr
	}
	if len(id.Tenants) > 0 {
		ts := make([]Tenant, len(id.Tenants))
		for i, t := range id.Tenants {
			t.Kind, t.Name = Clean(t.Kind), RedactText(t.Name)
			ts[i] = t
		}
		id.Tenants = ts
	}
	if len(id.RouterQueue) > 0 {
		qs := make([]RouterQueued, len(id.RouterQueue))
		for i, q := range id.RouterQueue {
			q.WorkerType = Clean(q.WorkerType)
			qs[i] = q
		}
		id.RouterQueue = qs
	}
	if o := id.Overhead; o != nil {
		c := *o
		c.Missing, c.Metric, c.TTFTMetric = Clean(c.Missing), Clean(c.Metric), Clean(c.TTFTMetric)
		bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
		// a mean that is no number is unknown, not zero
		if bad(c.Mean) || bad(c.Requests) || bad(c.Sum) {
			c.Mean, c.Requests, c.Sum = 0, 0, 0
		}
		if bad(c.TTFTMean) || bad(c.TTFTRequests) || bad(c.TTFTSum) {
			c.TTFTMean, c.TTFTRequests, c.TTFTSum = 0, 0, 0
		}
		id.Overhead = &c
	}
	if len(id.Models) > 0 {
		ms := make([]ModelInfo, len(id.Models))
		for i, m := range id.Models {
			m.ID = Clean(m.ID)
			m.Extra = CleanMap(m.Extra, Clean)
			ms[i] = m
		}
		id.Models = ms
	}
	return id
}

// CleanGPUs cleans what a driver or a DCGM exporter wrote: device names and
// UUIDs, process names and command lines, throttle reasons, errors.
func CleanGPUs(g GPUSnapshot) GPUSnapshot { return cleanGPUs(g, redactNow{}) }

// redactor redacts a GPU snapshot's free text and command lines.
type redactor interface {
	text(string) string
	cmdline(string) string
}

// redactNow redacts every string it is given.
type redactNow struct{}

func (redactNow) text(s string) string    { return RedactText(s) }
func (redactNow) cmdline(s string) string { return RedactCmdline(s) }

// GPUCleaner is CleanGPUs for a source that cleans a snapshot at every
// refresh: an error, a note or a command line that was in the last
// snapshot is not redacted again (a GPU process's command line stays the
// same second after second, and redacting it ran regular expressions over
// it each time: 0.1–0.3 ms a process, BenchmarkGPUCleaner). It keeps only
// what the last snapshot held. Not safe for concurrent use.
type GPUCleaner struct {
	last, cur map[cleanKey]string
}

type cleanKey struct {
	cmdline bool // RedactCmdline, else RedactText
	raw     string
}

// Clean is CleanGPUs(g).
func (c *GPUCleaner) Clean(g GPUSnapshot) GPUSnapshot {
	if c.cur == nil {
		c.last, c.cur = map[cleanKey]string{}, map[cleanKey]string{}
	}
	g = cleanGPUs(g, c)
	c.last, c.cur = c.cur, c.last
	clear(c.cur)
	return g
}

func (c *GPUCleaner) text(s string) string    { return c.memo(false, s) }
func (c *GPUCleaner) cmdline(s string) string { return c.memo(true, s) }

// memo redacts s as the last snapshot did, or afresh.
func (c *GPUCleaner) memo(cmdline bool, s string) string {
	if s == "" {
		return ""
	}
	k := cleanKey{cmdline, s}
	v, ok := c.cur[k]
	if !ok {
		if v, ok = c.last[k]; !ok {
			if cmdline {
				v = RedactCmdline(s)
			} else {
				v = RedactText(s)
			}
		}
		c.cur[k] = v
	}
	return v
}

func cleanGPUs(g GPUSnapshot, r redactor) GPUSnapshot {
	g.Driver, g.CUDA, g.Err, g.Note = Clean(g.Driver), Clean(g.CUDA), r.text(g.Err), r.text(g.Note)
	if len(g.GPUs) > 0 {
		gs := make([]GPU, len(g.GPUs))
		for i, d := range g.GPUs {
			d.UUID, d.Name, d.Err = Clean(d.UUID), Clean(d.Name), r.text(d.Err)
			if d.Throttle != nil { // [] (none) and null (not read) differ in JSON
				d.Throttle = CleanAll(append(make([]string, 0, len(d.Throttle)), d.Throttle...))
			}
			if len(d.Processes) > 0 {
				ps := make([]GPUProcess, len(d.Processes))
				for j, p := range d.Processes {
					p.Name, p.Cmdline = Clean(p.Name), r.cmdline(p.Cmdline)
					ps[j] = p
				}
				d.Processes = ps
			}
			gs[i] = d
		}
		g.GPUs = gs
	}
	return g
}

// CleanEvent cleans an event's outside text (titles and fields quote what a
// source saw).
func CleanEvent(e Event) Event {
	e.Endpoint, e.Title, e.Line = RedactText(e.Endpoint), RedactText(e.Title), RedactText(e.Line)
	e.Fields = CleanMap(e.Fields, RedactText)
	return e
}
