//go:build engines

package engines

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/logs"
	"github.com/llmtop/llmtop/sources/procfs"
)

// The KV pool llama-server allocates is -c, whether its slots split it (-np N: N slots of -c/N) or
// share it (unified: every slot's n_ctx is all of -c, the default without -np). /slots reads the
// same either way; the log's start-up line and the command line tell them apart.
const kvuPool = 2048

var kvuCases = []struct {
	name    string
	flags   []string
	unified bool
	slots   int
}{
	{"no -np (auto: unified)", []string{"-c", strconv.Itoa(kvuPool)}, true, 4},
	{"-np 2 (split)", []string{"-c", strconv.Itoa(kvuPool), "-np", "2"}, false, 2},
}

// TestLlamaServerKVUnified loads a real llama-server with two long requests and checks the KV usage
// llmtop shows (the core's snapshot, as `llmtop snapshot --json` prints it) against the engine's own
// numbers: the tokens its busy slots hold in /slots, read just before and just after llmtop's
// scrape, over the pool its start-up line states. Three cores see the same scrape: one with the
// log attached, one with the process's command line (/proc), one with neither (a range).
func TestLlamaServerKVUnified(t *testing.T) {
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	modelPath := writeModel(t, llamaShape)
	for _, c := range kvuCases {
		t.Run(c.name, func(t *testing.T) {
			port, err := freePort()
			if err != nil {
				t.Fatal(err)
			}
			url := fmt.Sprintf("http://127.0.0.1:%d", port)
			p := startPrivateLlama(t, bin, modelPath, port, "kvu-"+strconv.Itoa(c.slots), append([]string{"--slots"}, c.flags...)...)
			defer p.stop()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()

			// The engine's own word on its layout.
			got, _ := matchLog(t, p)
			ms := got["llamacpp_slots"]
			if len(ms) != 1 {
				t.Fatalf("start-up slots line matched %d times", len(ms))
			}
			f := ms[0].Fields
			ctxSlot, _ := strconv.Atoi(f["n_ctx_slot"])
			if f["kv_unified"] != strconv.FormatBool(c.unified) || f["n_slots"] != strconv.Itoa(c.slots) {
				t.Fatalf("engine logged %v; want %d slots, kv_unified %v", f, c.slots, c.unified)
			}
			if pool := map[bool]int{true: ctxSlot, false: ctxSlot * c.slots}[c.unified]; pool != kvuPool {
				t.Fatalf("engine's pool %d tokens (n_ctx_slot %d × %d slots, unified %v), started with -c %d", pool, ctxSlot, c.slots, c.unified, kvuPool)
			}

			withLog, withCmd, bare := core.New(core.Options{Endpoints: []string{url}}), core.New(core.Options{Endpoints: []string{url}}), core.New(core.Options{Endpoints: []string{url}})
			var mu sync.Mutex
			logs.Start(ctx, logs.Input{File: p.logPath}, logs.Options{Endpoint: url}, func(msg any) {
				mu.Lock()
				defer mu.Unlock()
				if in, ok := msg.(model.Input); ok {
					withLog.Apply(in)
				}
			})
			sc := engine.ScrapeOnce(ctx, scrapeConfig(url))
			mu.Lock()
			for _, m := range []*core.Monitor{withLog, withCmd, bare} {
				m.Apply(sc)
			}
			mu.Unlock()
			owner := procfs.Owner(procfs.FS(), port, time.Now())
			owner.Endpoint = url
			if owner.PID == 0 {
				t.Fatalf("/proc does not name the process on port %d: %+v", port, owner)
			}
			withCmd.Apply(owner)
			awaitConfig(t, &mu, withLog, url, "log.kv_unified")

			// Two long requests, measured while both run: a request ends when its slot is full,
			// and a split slot of 1024 tokens fills in about a second.
			var before, after int
			for try := 1; ; try++ {
				var ok bool
				if sc, before, after, ok = kvUnderLoad(t, ctx, url); ok {
					break
				}
				if try == 5 {
					t.Fatalf("in %d tries, the two requests never stayed busy through llmtop's scrape", try)
				}
			}
			lo, hi := float64(before)/kvuPool, float64(after)/kvuPool
			mu.Lock()
			defer mu.Unlock()
			for name, m := range map[string]*core.Monitor{"log": withLog, "command line": withCmd, "neither": bare} {
				m.Apply(sc)
				m.Tick(time.Now())
				met, notes := snapshotKV(t, m)
				kv, top, capacity := met.KVCacheUsageRatio, met.KVCacheUsageRatioMax, met.KVCapacityTokens
				t.Logf("%s: kv %v top %v capacity %v (engine %.4f–%.4f); notes %q", name, kv, top, capacity, lo, hi, notes)
				if name == "neither" {
					if !kv.OK || !top.OK || kv.V > hi+1e-6 || top.V < lo-1e-6 || capacity.OK {
						t.Errorf("with neither: range %v–%v, capacity %v; the engine's usage is %.4f–%.4f", kv, top, capacity, lo, hi)
					}
					continue
				}
				if !kv.OK || kv.V < lo-1e-6 || kv.V > hi+1e-6 || top.OK || !capacity.OK || capacity.V != kvuPool {
					t.Errorf("from the %s: KV usage %v (top %v), capacity %v; the engine holds %d–%d of %d tokens (%.4f–%.4f)", name, kv, top, capacity, before, after, kvuPool, lo, hi)
				}
			}
		})
	}
}

// kvUnderLoad sends two long requests to url and, once both slots are busy and hold at least 200
// tokens, scrapes it as llmtop does between two readings of the tokens held (/slots). ok is false
// when a request ended before or during that (the slots no longer both busy, or holding less
// after than before): then the reading brackets nothing, the requests are ended and the engine
// is idle again.
func kvUnderLoad(t *testing.T, ctx context.Context, url string) (sc model.Scrape, before, after int, ok bool) {
	t.Helper()
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _ = chat(loadCtx, url, "", fmt.Sprintf("kv layout %d %d", i, time.Now().UnixNano()), 3000, true)
		}(i)
	}
	loadDone := make(chan struct{})
	go func() {
		wg.Wait()
		close(loadDone)
	}()
	// missed ends what is left of the load and waits until the engine's slots are idle.
	missed := func(why string) (model.Scrape, int, int, bool) {
		stopLoad()
		<-loadDone
		t.Logf("not judged: %s; sending the load again", why)
		for {
			if _, busy := slotsHeld(t, ctx, url); busy == 0 {
				return model.Scrape{}, 0, 0, false
			}
			if ctx.Err() != nil {
				t.Fatal("the engine's slots stayed busy after the load was cancelled")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for {
		held, busy := slotsHeld(t, ctx, url)
		if busy == 2 && held >= 200 {
			break
		}
		select {
		case <-loadDone:
			return missed(fmt.Sprintf("the requests ended before /slots showed both busy with 200 tokens held (last: %d busy, %d held)", busy, held))
		default:
		}
		if ctx.Err() != nil {
			t.Fatalf("the engine never showed both slots busy (last: %d busy, %d held)", busy, held)
		}
		time.Sleep(20 * time.Millisecond)
	}
	before, _ = slotsHeld(t, ctx, url)
	sc = engine.ScrapeOnce(ctx, scrapeConfig(url))
	after, busy := slotsHeld(t, ctx, url)
	if busy != 2 || after < before {
		return missed(fmt.Sprintf("a request ended during the scrape (held %d → %d, %d busy)", before, after, busy))
	}
	return sc, before, after, true
}

// slotsHeld is the context the engine's busy slots hold, by its /slots (n_prompt_tokens counts the
// generated tokens in this build), and how many are busy.
func slotsHeld(t *testing.T, ctx context.Context, url string) (held, busy int) {
	t.Helper()
	var slots []llamaSlot
	if err := getJSON(ctx, url+"/slots", &slots); err != nil {
		t.Fatal(err)
	}
	for _, sl := range slots {
		if sl.IsProcessing {
			held += min(sl.NPrompt, sl.NCtx)
			busy++
		}
	}
	return held, busy
}

// awaitConfig waits until the current run of m's endpoint has config key k (a log line read).
func awaitConfig(t *testing.T, mu *sync.Mutex, m *core.Monitor, url, k string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a log line is read within a second, but the machine may be busy
	for {
		mu.Lock()
		var v string
		if e := m.Endpoint(url); e != nil && e.Current() != nil {
			v = e.Current().Config[k]
		}
		mu.Unlock()
		if v != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the core never took %s from the log", k)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func snapshotKV(t *testing.T, m *core.Monitor) (*model.MetricsJSON, []string) {
	t.Helper()
	doc := m.Snapshot()
	if len(doc.Endpoints) != 1 || doc.Endpoints[0].Metrics == nil {
		t.Fatalf("snapshot endpoints %+v", doc.Endpoints)
	}
	return doc.Endpoints[0].Metrics, doc.Endpoints[0].Notes
}
