package model

import (
	"maps"
	"reflect"
	"slices"
)

// sameReading reports whether b reads as a: the same endpoint, model and
// source, the same numbers, facts, notes and names, whatever their times.
// A fleet's steady replica answers the same numbers refresh after refresh:
// what is worked out from its newest sample alone then stands (Readings).
// A sample carrying request timings never reads as another: each is news.
func sameReading(a, b *Sample) bool {
	if a.Endpoint != b.Endpoint || a.Model != b.Model || a.Source != b.Source || a.Engine != b.Engine ||
		!a.Started.Equal(b.Started) || len(a.Observations) > 0 || len(b.Observations) > 0 {
		return false
	}
	if !sameMap(a.Gauges, b.Gauges) || !sameMap(a.Counters, b.Counters) || !sameMap(a.FinishReasons, b.FinishReasons) ||
		!sameMap(a.Info, b.Info) || !sameMap(a.From, b.From) || !slices.Equal(a.Notes, b.Notes) ||
		!slices.Equal(a.Engines, b.Engines) {
		return false
	}
	if !maps.EqualFunc(a.Latencies, b.Latencies, sameHistogram) || !sameDerived(a.Derived, b.Derived) {
		return false
	}
	switch {
	case a.LoRA == nil || b.LoRA == nil:
		return a.LoRA == b.LoRA
	default:
		return a.LoRA.Max == b.LoRA.Max && slices.Equal(a.LoRA.Running, b.LoRA.Running) && slices.Equal(a.LoRA.Waiting, b.LoRA.Waiting)
	}
}

func sameHistogram(a, b Histogram) bool {
	return a.Sum == b.Sum && a.Count == b.Count && a.Approx == b.Approx && slices.Equal(a.Buckets, b.Buckets) &&
		slices.EqualFunc(a.Parts, b.Parts, sameHistogram)
}

func sameDerived(a, b *Derived) bool {
	if a == nil || b == nil || a == b {
		return a == b
	}
	return a.By == b.By && a.Window == b.Window && maps.Equal(a.Rates, b.Rates) && maps.Equal(a.Ratios, b.Ratios) &&
		maps.Equal(a.Latency, b.Latency)
}

// sameMap is maps.Equal, at once for one map twice: a source that hands a
// steady replica's maps again (sources/prometheus) is read as the same
// without a look inside.
func sameMap[M ~map[K]V, K, V comparable](a, b M) bool {
	if len(a) == len(b) && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() {
		return true
	}
	return maps.Equal(a, b)
}
