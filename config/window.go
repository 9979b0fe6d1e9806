package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Intervals are the refresh intervals +/- step through.
var Intervals = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute}

// Windows are the spans [/] step through.
var Windows = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute}

// CheckInterval says what is wrong with d as a refresh interval: it must
// lie within the span +/- step through. Nil when d is fine.
func CheckInterval(d time.Duration) error {
	lo, hi := Intervals[0], Intervals[len(Intervals)-1]
	if d < lo || d > hi {
		return fmt.Errorf("want %s to %s (%s and %s are the limits +/- reach)", DurText(lo), DurText(hi), DurText(lo), DurText(hi))
	}
	return nil
}

// CheckWindow says what is wrong with d as the rates' and percentiles'
// window: it must be one of Windows. Nil when d is fine.
func CheckWindow(d time.Duration) error {
	if slices.Contains(Windows, d) {
		return nil
	}
	names := make([]string, len(Windows))
	for i, w := range Windows {
		names[i] = DurText(w)
	}
	return fmt.Errorf("want %s or %s (the windows [ and ] step through)", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// DurText formats a span for labels and messages: "1s", "250ms", "1m",
// "5m30s", "2h10m" (the screen's too).
func DurText(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		d = d.Round(time.Second)
		m, s := int(d.Minutes()), int(d.Seconds())%60
		if s == 0 {
			return fmt.Sprintf("%dm", m)
		}
		return fmt.Sprintf("%dm%02ds", m, s)
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}
