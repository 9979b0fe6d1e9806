package tui

import "time"

// What a pane drew of the clock. A pane's box is kept while nothing it is
// drawn from changed (layout_cache.go); the clock moves every frame, so a
// pane says what it read of it: a raw Clock() read is good for that
// instant only (the pane is drawn again whenever the clock moves), while
// ageText and olderThan note when their answer next changes ("20s ago"
// reads "21s ago" at a known moment; a STALE mark appears at one), and the
// box is kept until then.

// clockUse is what one draw read of the clock.
type clockUse struct {
	at    time.Time // the clock it was drawn at
	raw   bool      // it read Clock() itself: good at `at` only
	until time.Time // the first moment what it read changes (zero: never)
}

// holds reports whether a draw that read u of the clock still reads the
// same at c (the clock never runs back but in a replay's seek or a pause,
// which are keys, and a draw made later than c is not trusted either).
func (u clockUse) holds(c time.Time) bool {
	if u.raw {
		return c.Equal(u.at)
	}
	return !c.Before(u.at) && (u.until.IsZero() || c.Before(u.until))
}

// beginDraw starts noting the clock reads of one pane's draw.
func (d *Data) beginDraw() {
	d.drawing, d.use = true, clockUse{at: d.clock()}
}

// endDraw stops noting and says what the draw read.
func (d *Data) endDraw() clockUse {
	d.drawing = false
	return d.use
}

// changesAt notes that what the pane being drawn read of the clock reads
// differently from t on.
func (d *Data) changesAt(t time.Time) {
	if d.drawing && (d.use.until.IsZero() || t.Before(d.use.until)) {
		d.use.until = t
	}
}

// noting runs f as part of the draw under way and returns what f alone
// read of the clock, so that a part kept for another draw in the same
// frame can be noted there too (replay).
func (d *Data) noting(f func()) clockUse {
	outer, drawing := d.use, d.drawing
	d.drawing, d.use = true, clockUse{at: d.clock()}
	f()
	part := d.use
	d.drawing, d.use = drawing, outer
	d.replay(part)
	return part
}

// replay notes, in the draw under way, what a part it reuses read of the
// clock.
func (d *Data) replay(u clockUse) {
	if !d.drawing {
		return
	}
	if u.raw {
		d.use.raw = true
	}
	if !u.until.IsZero() {
		d.changesAt(u.until)
	}
}

// ageText is how long ago t was, as fmtDur says it, noting when that text
// changes.
func (d *Data) ageText(t time.Time) string {
	el := d.clock().Sub(t)
	d.changesAt(t.Add(durTextNext(el)))
	return fmtDur(el)
}

// olderThan reports whether t is more than age before the clock, noting
// when that turns true (once true it stays true: the clock runs on).
func (d *Data) olderThan(t time.Time, age time.Duration) bool {
	if d.clock().Sub(t) > age {
		return true
	}
	d.changesAt(t.Add(age + 1))
	return false
}

// durTextNext is the first duration past el that config.DurText (fmtDur)
// writes differently (TestDurTextNextIsWhereTheTextChanges): whole milliseconds under a second, whole seconds
// (rounded: the text steps at each half second) under an hour, whole
// minutes (rounded) under two days, whole hours (cut) past that.
func durTextNext(el time.Duration) time.Duration {
	const half = time.Second / 2
	switch {
	case el <= 0:
		return 1
	case el < time.Second:
		return el.Truncate(time.Millisecond) + time.Millisecond
	case el < time.Minute:
		return min(el.Round(time.Second)+half, time.Minute)
	case el < time.Hour:
		return min(el.Round(time.Second)+half, time.Hour)
	case el < 48*time.Hour:
		return min(el.Round(time.Minute)+30*time.Second, 48*time.Hour)
	default:
		return el.Truncate(time.Hour) + time.Hour
	}
}
