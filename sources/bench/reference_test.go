package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// refRecord is what the reference client measured of one request.
type refRecord struct {
	index       int
	start       time.Time
	first, last time.Time // the first and the last token's chunk
	tokens      int
}

// referenceClient is the few lines a person would write to time a
// stream, as `vllm bench serve` does for /v1/completions: one
// keep-alive client, POST, read lines, decode each data payload with the
// standard JSON decoder, and take every chunk with a choice as a token
// (its text may be empty: a token that ends mid-character). It is the
// yardstick llmtop's client is held to in BenchmarkReferenceClient.
func referenceClient(url string, bodies [][]byte, streams int) []refRecord {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}}
	var next atomic.Int64
	out := make([]refRecord, len(bodies))
	var wg sync.WaitGroup
	for range streams {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(bodies) {
					return
				}
				out[i] = referenceOne(client, url, i, bodies[i])
			}
		})
	}
	wg.Wait()
	return out
}

func referenceOne(client *http.Client, url string, i int, body []byte) refRecord {
	rec := refRecord{index: i}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "ref-"+strconv.Itoa(i))
	// llama-server closes the connection after each stream: without this,
	// Go fails a POST sent on the closed one instead of resending it.
	req.Header["Idempotency-Key"] = nil
	rec.start = time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return rec
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data: ")) || bytes.Equal(line, []byte("data: [DONE]")) {
			continue
		}
		now := time.Now()
		var c struct {
			Choices []struct {
				Text         *string `json:"text"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if json.Unmarshal(line[len("data: "):], &c) != nil || len(c.Choices) == 0 || c.Choices[0].Text == nil {
			continue
		}
		if c.Choices[0].FinishReason != nil && *c.Choices[0].Text == "" {
			continue // the closing chunk: no token
		}
		if rec.tokens == 0 {
			rec.first = now
		}
		rec.last = now
		rec.tokens++
	}
	return rec
}

// BenchmarkReferenceClient runs llmtop's client and the reference client
// (above) side by side on the same prompts against the same streaming
// server, at 1 and 64 streams, with no warmup, and reports each one's TTFT
// and TPOT p50/p99 and llmtop's minus the reference's (diff-*). Issue 31:
// they must differ by at most 0.3 ms at 1 stream and 1 ms at p99 with 64.
//
// The server is a child process (this test binary) that flushes the first
// token 20 ms after a request arrives and one every 5 ms after; with
// LLMTOP_BENCH_REF_URL set, that server instead (a real llama-server:
// /v1/completions, 1 stream only, the two clients' prompt sets swapped each
// round so that neither meets prompts the other has just cached).
func BenchmarkReferenceClient(b *testing.B) {
	const tokens = 32
	url, real := os.Getenv("LLMTOP_BENCH_REF_URL"), true
	if url == "" {
		url, real = startServer(b, tokens, 20*time.Millisecond, 5*time.Millisecond, false), false
	}
	for _, streams := range []int{1, 64} {
		if real && streams > 1 {
			continue
		}
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			n := max(32, 2*streams)
			cfg := Config{URL: url, Model: "m", API: Completions, Concurrency: streams, NumRequests: n,
				InputLen: 256, OutputLen: tokens}
			if real {
				cfg.InputLen = 1000
			}
			cfg.Defaults()
			set := func(seed uint64) [][]byte {
				c := cfg
				c.Seed = seed
				bodies := make([][]byte, n)
				for i := range bodies {
					bodies[i] = c.body("m", i, true)
				}
				return bodies
			}
			var ours, ref [2][]float64 // TTFT, TPOT in ms
			round := uint64(0)
			for b.Loop() {
				round++
				a, z := set(2*round), set(2*round+1)
				if round%2 == 0 {
					a, z = z, a
				}
				runOurs := func(bodies [][]byte) {
					for _, r := range runBodies(b, cfg, bodies) {
						if !r.OK || r.Chunks != tokens {
							b.Fatalf("llmtop request %d: ok %v, %d chunks (%s)", r.Index, r.OK, r.Chunks, r.Detail)
						}
						ours[0] = append(ours[0], ms(r.TTFT))
						ours[1] = append(ours[1], ms(r.E2EL-r.TTFT)/float64(r.Chunks-1))
					}
				}
				// Alternate which goes first, so neither always meets a
				// server warmed by the other.
				if round%2 == 1 {
					addRef(b, &ref, referenceClient(url+Completions.Path(), a, streams), tokens)
					runOurs(z)
				} else {
					runOurs(z)
					addRef(b, &ref, referenceClient(url+Completions.Path(), a, streams), tokens)
				}
			}
			for k, name := range []string{"ttft", "tpot"} {
				sort.Float64s(ours[k])
				sort.Float64s(ref[k])
				for _, p := range []float64{50, 99} {
					o, r := report.Percentile(ours[k], p), report.Percentile(ref[k], p)
					b.ReportMetric(o, fmt.Sprintf("%s-p%.0f-ms", name, p))
					b.ReportMetric(r, fmt.Sprintf("ref-%s-p%.0f-ms", name, p))
					b.ReportMetric(o-r, fmt.Sprintf("diff-%s-p%.0f-ms", name, p))
				}
			}
		})
	}
}

// runBodies sends prepared bodies with llmtop's client (a fresh one, as
// each `llmtop bench` run has), no warmup, and returns the records.
func runBodies(b *testing.B, cfg Config, bodies [][]byte) []report.Record {
	r := &runState{cfg: &cfg, model: cfg.Model, extras: true, bodies: bodies,
		q: &requester{client: newClient(cfg.Concurrency), url: cfg.BaseURL() + cfg.API.Path(), api: cfg.API, timeout: cfg.Timeout}}
	ctx := b.Context()
	r.closedLoop(ctx, ctx, cfg.Concurrency, len(bodies), 0, time.Time{})
	return r.recs
}

func addRef(b *testing.B, acc *[2][]float64, recs []refRecord, tokens int) {
	for _, r := range recs {
		if r.tokens != tokens {
			b.Fatalf("reference request %d: %d tokens, want %d", r.index, r.tokens, tokens)
		}
		acc[0] = append(acc[0], ms(r.first.Sub(r.start)))
		acc[1] = append(acc[1], ms(r.last.Sub(r.first))/float64(r.tokens-1))
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
