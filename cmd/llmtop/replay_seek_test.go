package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/gpu"
)

// A seek anywhere lands on the very state a replay from the start reaches
// at that instant: every field of the core, compared one by one, for
// random targets and for the instants around the index's segment
// boundaries (a checkpoint every 29 records), in a recording that holds
// engine runs and a restart, log lines, and a GPU lost then recovered.
func TestSeekEqualsReplayFromTheStart(t *testing.T) {
	file := seekRecording(t)
	r, err := recording.NewReader(bytes.NewReader(file), "mem")
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	var recs []recording.Record
	kinds := map[string]int{}
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		recs = append(recs, rec)
		kinds[fmt.Sprintf("%T", rec.Msg)]++
	}
	// what the recording must hold for the comparison to mean something
	for _, k := range []string{"model.Scrape", "model.GPUSnapshot", "model.Event", "recording.Tick"} {
		if kinds[k] == 0 {
			t.Fatalf("the recording holds no %s: %v", k, kinds)
		}
	}
	if kinds["model.LogLine"]+kinds["model.LogLines"] == 0 {
		t.Fatalf("the recording holds no log lines: %v", kinds)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rp, _ := replayerOn(t, ctx, file, replayOptions{Speed: 1, Every: 29}, recs[0].Time)
	if _, _, err, _ := rp.x.waitDone(ctx.Done()); err != nil {
		t.Fatal(err)
	}
	if len(rp.x.segs) < 20 {
		t.Fatalf("%d segments: the seeks would not cross checkpoints", len(rp.x.segs))
	}

	// the targets: every segment's start, a nanosecond before and after,
	// the first and last records, and random instants
	first, last := recs[0].Time, recs[len(recs)-1].Time
	targets := []time.Time{first, last, last.Add(time.Hour)}
	for _, s := range rp.x.segs {
		targets = append(targets, s.start, s.start.Add(-time.Nanosecond), s.start.Add(time.Nanosecond))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 40 {
		targets = append(targets, first.Add(time.Duration(rng.Int64N(int64(last.Sub(first))))))
	}
	slices.SortFunc(targets, func(a, b time.Time) int { return a.Compare(b) })

	// the reference: one core fed from the start, target after target
	ref := session.ReplayCore(h)
	next := 0
	var refScenario *recording.Scenario
	// seek in a shuffled order (a seek must not depend on the one
	// before), compare in time order
	order := rng.Perm(len(targets))
	got := make([]position, len(targets))
	for _, i := range order {
		p, err := rp.seekTo(targets[i])
		if err != nil {
			t.Fatal(err)
		}
		got[i] = p
	}
	for i, at := range targets {
		for next < len(recs) && !recs[next].Time.After(at) {
			session.Feed(ref, recs[next])
			if sc, ok := recs[next].Msg.(recording.Scenario); ok {
				refScenario = &sc
			}
			next++
		}
		p := got[i]
		if err := sameState(reflect.ValueOf(ref), reflect.ValueOf(p.mon), "core", map[[2]unsafe.Pointer]bool{}); err != nil {
			t.Fatalf("seek to %s (record %d of %d): the core differs from the replay from the start: %v", at.Sub(first), next, len(recs), err)
		}
		if !reflect.DeepEqual(refScenario, p.scenario) {
			t.Fatalf("seek to %s: scenario %+v, from the start %+v", at.Sub(first), p.scenario, refScenario)
		}
		// the cursor goes on with the record after the target
		rec, ok := p.cur.peek()
		if ok != (next < len(recs)) || ok && !rec.Time.Equal(recs[next].Time) {
			t.Fatalf("seek to %s: the cursor is at %v (%v), want record %d", at.Sub(first), rec.Time, ok, next)
		}
	}
}

// seekRecording records the simulator through a restart, with its log
// and one simulated GPU that is lost for half a minute.
func seekRecording(t *testing.T) []byte {
	ss := newSimSession(t, "healthy:60s,queue-buildup:60s,crash-restart:60s,healthy")
	var buf bytes.Buffer
	w, err := recording.NewWriter(&buf, recording.Header{Face: "monitor", Started: ss.clk.Now(), Endpoints: []string{ss.url},
		Interval: recording.Duration(time.Second), Window: recording.Duration(time.Minute), Simulated: true})
	if err != nil {
		t.Fatal(err)
	}
	gpus := gpu.NewSimulated(gpu.Config{Now: ss.clk.Now, Filter: gpu.NewFilter(nil, "", false)}, 1, func() gpu.SimLoad {
		l := ss.s.Load()
		return gpu.SimLoad{Util: l.Util, MemUsed: l.MemUsed, MemTotal: l.MemTotal, BatchShare: l.BatchShare}
	})
	defer gpus.Close()
	const lostFrom, lostTo = 100, 130
	for s := range 240 {
		at, msgs := ss.step(t)
		snap, evs := gpus.Refresh()
		for _, e := range evs {
			msgs = append(msgs, e)
		}
		if s >= lostFrom && s < lostTo && len(snap.GPUs) > 0 {
			g := slices.Clone(snap.GPUs)
			g[0] = model.GPU{Index: g[0].Index, UUID: g[0].UUID, Name: g[0].Name, Lost: true, Err: "ERROR_GPU_IS_LOST"}
			snap.GPUs = g
		}
		switch s {
		case lostFrom:
			msgs = append(msgs, model.Event{Time: at, Source: "gpu", Kind: gpu.KindGPULost, Severity: model.SevCrit, Category: "gpu", Title: "GPU 0 lost"})
		case lostTo:
			msgs = append(msgs, model.Event{Time: at, Source: "gpu", Kind: gpu.KindGPURecovered, Severity: model.SevInfo, Category: "gpu", Title: "GPU 0 answers again"})
		}
		msgs = append(msgs, snap)
		for _, m := range msgs {
			if _, err := w.Write(at, m); err != nil {
				t.Fatal(err)
			}
		}
		w.Write(at, recording.Tick{})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sameState compares two values field by field, unexported fields
// included, through pointers, maps, slices and interfaces (shared and
// cyclic pointers once): the first difference, by its path. A function
// or channel is compared by being set, a *time.Location by name.
func sameState(a, b reflect.Value, path string, seen map[[2]unsafe.Pointer]bool) error {
	if a.IsValid() != b.IsValid() {
		return fmt.Errorf("%s: one is missing", path)
	}
	if !a.IsValid() {
		return nil
	}
	if a.Type() != b.Type() {
		return fmt.Errorf("%s: %s against %s", path, a.Type(), b.Type())
	}
	diff := func() error { return fmt.Errorf("%s: %v against %v", path, showValue(a), showValue(b)) }
	switch a.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if a.IsNil() != b.IsNil() {
			return diff()
		}
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return diff()
			}
			return nil
		}
		if a.Type() == reflect.TypeFor[*time.Location]() {
			if a.Interface().(*time.Location).String() != b.Interface().(*time.Location).String() {
				return diff()
			}
			return nil
		}
		k := [2]unsafe.Pointer{a.UnsafePointer(), b.UnsafePointer()}
		if seen[k] {
			return nil
		}
		seen[k] = true
		return sameState(a.Elem(), b.Elem(), "(*"+path+")", seen)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return diff()
			}
			return nil
		}
		return sameState(a.Elem(), b.Elem(), path, seen)
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Name() == "endpointSeries" && a.Type().Field(i).Name == "replay" {
				if err := sameSparkPushes(a, b, path+".replay"); err != nil {
					return err
				}
				continue
			}
			if err := sameState(field(a, i), field(b, i), path+"."+a.Type().Field(i).Name, seen); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.IsNil() != b.IsNil() && a.Len()+b.Len() > 0 {
			return diff()
		}
		if a.Len() != b.Len() {
			return fmt.Errorf("%s: %d elements against %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if err := sameState(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), seen); err != nil {
				return err
			}
		}
	case reflect.Map:
		if a.IsNil() != b.IsNil() && a.Len()+b.Len() > 0 {
			return diff()
		}
		if a.Len() != b.Len() {
			return fmt.Errorf("%s: %d keys against %d", path, a.Len(), b.Len())
		}
		it := a.MapRange()
		for it.Next() {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() {
				return fmt.Errorf("%s: key %v only on one side", path, showValue(it.Key()))
			}
			if err := sameState(it.Value(), bv, fmt.Sprintf("%s[%v]", path, showValue(it.Key())), seen); err != nil {
				return err
			}
		}
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		if x != y && !(x != x && y != y) { // NaN is NaN
			return diff()
		}
	case reflect.Complex64, reflect.Complex128:
		if a.Complex() != b.Complex() {
			return diff()
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return diff()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return diff()
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return diff()
		}
	case reflect.String:
		if a.String() != b.String() {
			return diff()
		}
	default:
		return fmt.Errorf("%s: cannot compare a %s", path, a.Type())
	}
	return nil
}

// field is v's i-th field, readable even when unexported (v addressable
// or not).
// sameSparkPushes compares the sparkline points the last sample pushed
// (model's endpointSeries.replay) by the sparkline each went onto: they
// are kept in the order of the sample's maps, which Go leaves random, so
// two cores fed the same records hold them in different orders (the
// seeks failed at random on it). The sparklines themselves are compared
// as the series' spark field.
func sameSparkPushes(a, b reflect.Value, path string) error {
	pushes := func(es reflect.Value) map[string]string {
		f := func(v reflect.Value, name string) reflect.Value {
			sf, _ := v.Type().FieldByName(name)
			return field(v, sf.Index[0])
		}
		names := map[unsafe.Pointer]string{}
		it := f(es, "spark").MapRange()
		for it.Next() {
			names[it.Value().UnsafePointer()] = it.Key().String()
		}
		out := map[string]string{}
		rp := f(es, "replay")
		for i := range rp.Len() {
			p := rp.Index(i)
			name, ok := names[f(p, "r").UnsafePointer()]
			if !ok {
				name = fmt.Sprintf("a sparkline not in spark (%d)", i)
			}
			out[name] = fmt.Sprint(showValue(f(p, "v")))
		}
		return out
	}
	if pa, pb := pushes(a), pushes(b); !reflect.DeepEqual(pa, pb) {
		return fmt.Errorf("%s: %v against %v", path, pa, pb)
	}
	return nil
}

func field(v reflect.Value, i int) reflect.Value {
	if !v.CanAddr() {
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		v = c
	}
	f := v.Field(i)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

func showValue(v reflect.Value) string {
	if v.CanInterface() {
		return fmt.Sprintf("%#v", v.Interface())
	}
	return v.String()
}
