package diagnosis

import (
	"testing"
	"time"
)

func TestPluralAndAgo(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{plural(1, "restart"), "1 restart"},
		{plural(3, "restart"), "3 restarts"},
		{ago(0), "just now"},
		{ago(400 * time.Millisecond), "just now"},
		{ago(12*time.Second + 400*time.Millisecond), "12 s ago"},
		{ago(5 * time.Minute), "5 m ago"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// QA #21: a restart seen in this very refresh says "just now", not "0 ms ago".
func TestRestartJustNow(t *testing.T) {
	f := byID(Evaluate(input(ep(func(e *Endpoint) { e.State.Restarts = []time.Time{t0} })), DefaultConfig()), "restarts")
	if f == nil || !hasEvidence(f, "1 restart, newest just now (counters went backwards)") {
		t.Fatalf("%+v", f)
	}
}
