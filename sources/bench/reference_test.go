package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
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
// server (a child process that flushes the first token 20 ms after a
// request and one every 5 ms after), at 1 and 64 streams, with no warmup,
// and reports each one's TTFT and TPOT p50/p99 and llmtop's minus the
// reference's. Issue 31: they must differ by at most 0.3 ms at 1 stream
// and 1 ms at p99 with 64.
func BenchmarkReferenceClient(b *testing.B) {
	const tokens = 32
	url := startServer(b, tokens, 20*time.Millisecond, 5*time.Millisecond, false)
	for _, streams := range []int{1, 64} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			n := max(64, 2*streams)
			cfg := Config{URL: url, Model: "m", API: Completions, Concurrency: streams, NumRequests: n,
				InputLen: 256, OutputLen: tokens}
			cfg.Defaults()
			bodies := make([][]byte, n)
			for i := range bodies {
				bodies[i] = cfg.body("m", i, true)
			}
			var ours, ref [2][]float64 // TTFT, TPOT in ms
			for b.Loop() {
				// Alternate which goes first, so neither always meets a
				// server warmed by the other.
				for _, first := range []bool{true, false} {
					if first {
						addRef(&ref, referenceClient(url+Completions.Path(), bodies, streams), tokens)
					}
					for _, r := range runRecords(b, cfg) {
						if !r.OK || r.Chunks != tokens {
							b.Fatalf("llmtop request %d: ok %v, %d chunks (%s)", r.Index, r.OK, r.Chunks, r.Detail)
						}
						ours[0] = append(ours[0], ms(r.TTFT))
						ours[1] = append(ours[1], ms(r.E2EL-r.TTFT)/float64(r.Chunks-1))
					}
					if !first {
						addRef(&ref, referenceClient(url+Completions.Path(), bodies, streams), tokens)
					}
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

func addRef(acc *[2][]float64, recs []refRecord, tokens int) {
	for _, r := range recs {
		if r.tokens != tokens {
			panic(fmt.Sprintf("reference request %d: %d tokens, want %d", r.index, r.tokens, tokens))
		}
		acc[0] = append(acc[0], ms(r.first.Sub(r.start)))
		acc[1] = append(acc[1], ms(r.last.Sub(r.first))/float64(r.tokens-1))
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
