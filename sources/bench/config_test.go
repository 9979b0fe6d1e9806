package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// With neither --rate nor --concurrency the run is the quick preset's
// closed loop of 16 streams; an explicit inf keeps "no cap".
func TestDefaultsRateAndConcurrency(t *testing.T) {
	for _, c := range []struct {
		name      string
		in        Config
		wantConc  int
		allAtOnce bool
	}{
		{"nothing given", Config{}, DefaultStreams, false},
		{"concurrency only", Config{Concurrency: 4}, 4, false},
		{"inf without concurrency", Config{Rate: report.Inf, NumRequests: 50}, 0, true},
		{"inf with concurrency", Config{Rate: report.Inf, Concurrency: 8, NumRequests: 50}, 8, false},
		{"finite rate, no cap", Config{Rate: 5}, 0, false},
		{"finite rate with cap", Config{Rate: 5, Concurrency: 3}, 3, false},
	} {
		cfg := c.in
		cfg.URL = "http://127.0.0.1:8000"
		cfg.Defaults()
		if cfg.Concurrency != c.wantConc || cfg.AllAtOnce() != c.allAtOnce {
			t.Errorf("%s: concurrency %d all-at-once %v, want %d %v", c.name, cfg.Concurrency, cfg.AllAtOnce(), c.wantConc, c.allAtOnce)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		// "All at once" has no end without a count.
		{"inf, duration, no count", Config{Rate: report.Inf, Duration: time.Minute}, "--num-requests"},
		{"inf, nothing else", Config{Rate: report.Inf}, "--num-requests"},
		{"negative rate", Config{Rate: -1, NumRequests: 5}, "--rate"},
		{"negative concurrency", Config{Concurrency: -2}, "concurrency"},
		{"negative burstiness", Config{Rate: 5, Burstiness: -1}, "burstiness"},
		{"NaN burstiness", Config{Rate: 5, Burstiness: math.NaN()}, "burstiness"},
	} {
		cfg := c.cfg
		cfg.URL = "http://127.0.0.1:8000"
		cfg.Defaults()
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", c.name, err, c.want)
		}
	}
	// Run refuses it before sending anything.
	if _, err := Run(t.Context(), Config{URL: "http://127.0.0.1:1", Model: "m", Rate: report.Inf, Duration: time.Second}, nil); err == nil {
		t.Error("Run accepted --rate inf with only --duration")
	}
}
