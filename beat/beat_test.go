package beat

import (
	"testing"
	"time"
)

func TestNextIsOnTheGridAndAfterNow(t *testing.T) {
	base := time.Date(2026, 11, 26, 23, 0, 7, 0, time.UTC)
	for _, c := range []struct {
		now   time.Duration // after base
		every time.Duration
		want  time.Duration // after base
	}{
		{0, time.Second, time.Second}, // on the grid: the next one
		{1, time.Second, time.Second},
		{999 * time.Millisecond, time.Second, time.Second},
		{300 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond},
		{100 * time.Millisecond, 5 * time.Second, 3 * time.Second}, // 23:00:10
		{100 * time.Millisecond, 3 * time.Second, 2 * time.Second}, // 23:00:09
	} {
		got := Next(base.Add(c.now), c.every)
		if want := base.Add(c.want); !got.Equal(want) {
			t.Errorf("Next(+%v, %v) = %v, want %v", c.now, c.every, got.Format("15:04:05.000"), want.Format("15:04:05.000"))
		}
	}
	if got := Next(base, 0); !got.Equal(base) {
		t.Errorf("Next with no period = %v, want now", got)
	}
}

// Timers computed from different moments and periods that divide one
// another fall on the same instants: that is the point of the grid.
func TestPeriodsShareInstants(t *testing.T) {
	now := time.Now()
	sec := Next(now, time.Second)
	for _, every := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second} {
		at := now
		for range 10 {
			at = Next(at, every)
			if at.Equal(sec) {
				break
			}
		}
		if !at.Equal(sec) {
			t.Errorf("the grid of %v misses the whole second %v", every, sec)
		}
	}
	if a, b := Next(now.Add(123*time.Microsecond), time.Second), Next(now.Add(456*time.Microsecond), time.Second); !a.Equal(b) && b.Sub(a) != time.Second {
		t.Errorf("two timers set moments apart: %v and %v", a, b)
	}
	if u := Until(now, time.Second); u <= 0 || u > time.Second {
		t.Errorf("Until = %v, want (0, 1s]", u)
	}
}

func TestAfterLeavesRoom(t *testing.T) {
	base := time.Date(2026, 11, 26, 23, 0, 7, 0, time.UTC)
	// a poll at .990 waits for the beat after next rather than running 10 ms later
	if got, want := After(base.Add(990*time.Millisecond), 500*time.Millisecond, time.Second), base.Add(2*time.Second); !got.Equal(want) {
		t.Errorf("After = %v, want %v", got.Format("15:04:05.000"), want.Format("15:04:05.000"))
	}
	if got, want := After(base.Add(10*time.Millisecond), 500*time.Millisecond, time.Second), base.Add(time.Second); !got.Equal(want) {
		t.Errorf("After = %v, want %v", got.Format("15:04:05.000"), want.Format("15:04:05.000"))
	}
}
