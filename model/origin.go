package model

import "time"

// SourcePrometheus is the Origin.Source of an endpoint read through a
// Prometheus server rather than scraped by llmtop itself.
const SourcePrometheus = "prometheus"

// Origin says where an endpoint's numbers come from when llmtop does not
// scrape it itself: sent by a source before (and with) the endpoint's
// scrapes, so every face can name the endpoint and say what that source
// cannot give.
type Origin struct {
	Endpoint string
	// Name is the endpoint's human name (namespace/pod, or job/instance).
	Name string
	// Source is SourcePrometheus; Via the (redacted) server it was read from.
	Source, Via string
	// Labels are the target's identifying labels (job, instance, pod,
	// namespace), already sanitised.
	Labels map[string]string
	// Missing names what this source cannot give (logs, /slots, the NVML
	// process list, the health route): shown as "not available", never as
	// zero or fine.
	Missing []string
	// Gone is set when the target left the source (a pod deleted, a target
	// dropped): its numbers are dropped, the endpoint is shown gone.
	Gone bool
	// GoneWhy says why (e.g. "no longer among Prometheus's targets").
	GoneWhy string
}

// Batch is a whole refresh of a fleet source (Prometheus): its messages
// (Origins, then Scrapes) are applied together, and the rules run once on
// all of them. Every face that builds a core takes it (core.Monitor.Apply).
type Batch []Input

// GoneExpiry is how long an endpoint that left its source stays listed as
// gone before the core (and the source) forget it: a fleet that churns pods
// must not grow without end (50 pods replaced every 5 s reached 2 650
// endpoints in 4.5 min).
const GoneExpiry = 2 * time.Minute
