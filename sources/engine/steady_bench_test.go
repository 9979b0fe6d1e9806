package engine

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// BenchmarkSteadyScrape is the monitor's one scrape a second once the
// engine is identified: a loopback GET of the real vLLM capture, its parse,
// the adapter's mapping and the cleaning (with /health beside it one
// scrape in ten). With tui's BenchmarkScrapeAndFrame (the core's apply and
// the frame) it is the floor of a steady second (docs/architecture.md,
// "What the monitor costs").
func BenchmarkSteadyScrape(b *testing.B) {
	srv := httptest.NewServer(enginetest.New(model.VLLM))
	b.Cleanup(srv.Close)
	s := newSession(Config{URL: srv.URL})
	ctx := context.Background()
	for range 3 { // identify, then steady
		if sc := s.scrape(ctx); sc.Err != "" {
			b.Fatal(sc.Err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if sc := s.scrape(ctx); sc.Err != "" || len(sc.Samples) == 0 {
			b.Fatalf("scrape: %q, %d samples", sc.Err, len(sc.Samples))
		}
	}
}
