//go:build engines

package engines

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
)

// TestPollerAcrossLlamaServerRestart polls a llama-server of its own while it serves, goes away and
// comes back on the same port: the poller reports it down (refused) and re-detects it, and the store
// fed with the scrapes sees the restart (its counters went back to zero).
func TestPollerAcrossLlamaServerRestart(t *testing.T) {
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	modelPath := writeModel(t, llamaShape)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	start := func(n int) *proc {
		t.Helper()
		return startPrivateLlama(t, bin, modelPath, port, fmt.Sprintf("restart-%d", n), "-np", "1", "-c", "2048")
	}
	first := start(1)
	defer first.stop() // stopping twice is harmless: the group is gone, done is closed

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	scrapes := make(chan model.Scrape, 256)
	p := engine.NewPoller(engine.Config{URL: url, Interval: 250 * time.Millisecond, Timeout: 5 * time.Second})
	go p.Run(ctx, func(s model.Scrape) {
		select {
		case scrapes <- s:
		default: // the test stopped reading
		}
	})
	store := model.NewStore(model.DefaultStoreConfig)
	var restarts []model.Event
	await := func(what string, ok func(model.Scrape) bool) model.Scrape {
		t.Helper()
		for {
			select {
			case s := <-scrapes:
				for _, sm := range s.Samples {
					for _, ev := range store.Add(sm) {
						if ev.Kind == model.KindRestart {
							restarts = append(restarts, ev)
						}
					}
				}
				if ok(s) {
					return s
				}
			case <-ctx.Done():
				t.Fatalf("never saw %s", what)
			}
		}
	}
	gen := func(s model.Scrape) float64 {
		if len(s.Samples) == 0 {
			return -1
		}
		return s.Samples[0].Counters[model.GenTokens]
	}
	if _, err := chat(ctx, url, "", "before the restart", 16, false); err != nil {
		t.Fatal(err)
	}
	await("16 generated tokens", func(s model.Scrape) bool { return s.OK() && gen(s) == 16 })

	first.stop()
	down := await("the engine down (connection refused)", func(s model.Scrape) bool { return s.ErrKind == model.ErrRefused })
	if down.Identity.Health != model.HealthDown || down.Hint == "" {
		t.Errorf("stopped engine: health %q hint %q (%s); want down, with a hint", down.Identity.Health, down.Hint, down.Err)
	}

	second := start(2)
	defer second.stop()
	back := await("the engine back", func(s model.Scrape) bool { return s.OK() && len(s.Samples) == 1 })
	if back.Identity.Engine != model.LlamaCpp || back.Identity.Health != model.HealthUp {
		t.Errorf("after the restart: %s %s", back.Identity.Engine, back.Identity.Health)
	}
	if _, err := chat(ctx, url, "", "after the restart", 4, false); err != nil {
		t.Fatal(err)
	}
	await("4 generated tokens after the restart", func(s model.Scrape) bool { return s.OK() && gen(s) == 4 })
	if len(restarts) != 1 {
		t.Errorf("store saw %d restart events, want 1: %+v", len(restarts), restarts)
	}
}
