package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sim"
)

// make run's routed stretch (issue 26): the fleet starts demoFleetWarm
// before the stretch, unwatched; during it each of its 8 endpoints (the
// router and 7 engines) is scraped into the session; as it ends every one
// leaves as gone with no scrape after, and the fleet stops serving (it is
// not simulated outside its stretch).
func TestDemoFleetRunsAndLeavesWithItsStretch(t *testing.T) {
	var mu sync.Mutex
	var got []any
	send := func(m any) { mu.Lock(); got = append(got, m); mu.Unlock() }
	d := &demoFleet{interval: 250 * time.Millisecond}
	defer d.stop()
	d.started(send)
	ctx := context.Background()
	r := sim.DemoRouted

	// before the warm-up: nothing runs
	if m := d.scenario(ctx, r.Segment, r.After-demoFleetWarm-time.Second, r.SegmentLength); m.Fleet || d.run != nil {
		t.Fatalf("before its warm-up: %+v, running %v", m, d.run != nil)
	}
	// warming: running, not watched
	d.scenario(ctx, r.Segment, r.After-demoFleetWarm, r.SegmentLength)
	if d.run == nil || d.cancel != nil {
		t.Fatalf("warming: running %v, watched %v", d.run != nil, d.cancel != nil)
	}
	urls := d.run.urls
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	if len(got) != 0 {
		t.Errorf("scraped while warming: %d messages", len(got))
	}
	mu.Unlock()
	// the stretch: watched
	if m := d.scenario(ctx, r.Segment, r.After+time.Second, r.SegmentLength); !m.Fleet || m.Name != r.Scenario || m.Elapsed != time.Second {
		t.Fatalf("in the stretch: %+v", m)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		seen := map[string]bool{}
		mu.Lock()
		for _, m := range got {
			if sc, ok := m.(model.Scrape); ok {
				seen[sc.Endpoint] = true
			}
		}
		mu.Unlock()
		if len(seen) == len(urls) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scraped %d of %d endpoints", len(seen), len(urls))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// the next segment: gone, then nothing more, and nothing serves
	d.scenario(ctx, sim.QueueBuildup, time.Second, time.Minute)
	mu.Lock()
	n := len(got)
	gone := map[string]bool{}
	lastScrape, firstGone := -1, -1
	for i, m := range got {
		switch m := m.(type) {
		case model.Scrape:
			lastScrape = i
		case model.Origin:
			if m.Gone {
				gone[m.Endpoint] = true
				if firstGone < 0 {
					firstGone = i
				}
			}
		}
	}
	mu.Unlock()
	if len(gone) != len(urls) || lastScrape > firstGone {
		t.Errorf("gone %d of %d, last scrape at %d after the first gone at %d", len(gone), len(urls), lastScrape, firstGone)
	}
	time.Sleep(600 * time.Millisecond)
	mu.Lock()
	if len(got) != n {
		t.Errorf("%d messages after the stretch ended", len(got)-n)
	}
	mu.Unlock()
	if d.run != nil {
		t.Fatal("the fleet still runs after its stretch")
	}
	c := http.Client{Timeout: time.Second}
	if resp, err := c.Get(urls[0] + "/metrics"); err == nil {
		resp.Body.Close()
		t.Errorf("the router still serves after the stretch")
	}
}
