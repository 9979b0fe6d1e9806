package proof

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/logs"
)

var t0 = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

// window is the monitor's default window: the numbers compared cover it.
const window = time.Minute

// lineBuf collects the sim's log without blocking it.
type lineBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lineBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the complete lines written since the last call.
func (b *lineBuf) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	data := b.buf.Bytes()
	i := bytes.LastIndexByte(data, '\n')
	if i < 0 {
		return nil
	}
	out := strings.Split(string(data[:i]), "\n")
	b.buf.Next(i + 1)
	return out
}

// rig is one simulator on a driven clock, watched the way the monitor
// watches a real server: scrapes through the vLLM adapter, log lines through
// the log catalogue, a GPU snapshot from the sim's load.
type rig struct {
	t     testing.TB
	sim   *sim.Sim
	clock *sim.FakeClock
	srv   *httptest.Server
	log   *lineBuf
	store *model.Store
	d     *diagnosis.Diagnoser

	id     model.Identity
	last   model.Scrape
	lastOK time.Time
	events []model.Event
	key    model.Key
	first  map[string]time.Time // when each finding id first opened
}

func newRig(t testing.TB, cfg sim.Config, dcfg diagnosis.Config) *rig {
	t.Helper()
	r := &rig{t: t, clock: sim.NewFakeClock(t0), log: &lineBuf{}, store: model.NewStore(model.DefaultStoreConfig),
		d: diagnosis.NewDiagnoser(dcfg), first: map[string]time.Time{}}
	cfg.Clock, cfg.Log = r.clock, r.log
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.sim = s
	r.srv = httptest.NewServer(s.Handler())
	t.Cleanup(r.srv.Close)
	return r
}

// step advances the simulated clock, then reads the sim and diagnoses.
func (r *rig) step(d time.Duration) diagnosis.Report {
	if err := r.sim.Advance(d); err != nil {
		r.t.Fatal(err)
	}
	now := r.clock.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	sc := engine.ScrapeOnce(ctx, engine.Config{URL: r.srv.URL, Engine: model.VLLM, Timeout: 5 * time.Second})
	cancel()
	sc.Time = now
	r.last = sc
	if sc.Identity.Engine != model.Unknown {
		r.id = sc.Identity
	}
	if sc.OK() {
		r.lastOK = now
	}
	for _, s := range sc.Samples {
		s.Time, s.Endpoint = now, r.srv.URL
		r.key = model.Key{Endpoint: r.srv.URL, Model: s.Model}
		r.events = append(r.events, r.store.Add(s)...)
	}
	for _, line := range r.log.lines() {
		if m, ok := logs.DefaultMatcher.Match(line); ok && m.Pattern.Category != "stats" {
			r.events = append(r.events, model.Event{Time: now, Endpoint: r.srv.URL, Source: "log", Kind: m.Pattern.ID,
				Severity: m.Pattern.Sev, Category: m.Pattern.Category, Title: m.Pattern.Title, Line: line, Fields: m.Fields})
		}
	}
	rep := r.d.Update(r.input(now))
	for _, f := range rep.Findings {
		if _, ok := r.first[f.ID]; !ok {
			r.first[f.ID] = now
		}
	}
	return rep
}

func (r *rig) input(now time.Time) diagnosis.Input {
	in := diagnosis.Input{Time: now, LogsOn: true, Events: r.events, GPU: r.gpu(now)}
	if r.key.Endpoint != "" {
		in.Endpoints = []diagnosis.Endpoint{diagnosis.EndpointFromStore(r.store, r.key, r.id, r.last, r.lastOK, window)}
	} else {
		in.Endpoints = []diagnosis.Endpoint{{URL: r.srv.URL, Identity: r.id, Scrape: r.last, LastOK: r.lastOK}}
	}
	return in
}

// gpu is the simulated device, as the GPU source shows it in the demo.
func (r *rig) gpu(now time.Time) *model.GPUSnapshot {
	l := r.sim.Load()
	g := model.GPU{Index: 0, Name: l.GPUName, Util: model.Some(100 * l.Util), MemTotal: model.Some(l.MemTotal)}
	if l.MemUsed > 0 {
		g.MemUsed = model.Some(l.MemUsed)
		g.Processes = []model.GPUProcess{{PID: 4242, Name: "python3", Engine: "vllm", UsedMem: model.Some(l.MemUsed)}}
	}
	return &model.GPUSnapshot{Time: now, GPUs: []model.GPU{g}, Simulated: true}
}

// run steps for total and returns the final report.
func (r *rig) run(total, every time.Duration) diagnosis.Report {
	var rep diagnosis.Report
	for el := time.Duration(0); el < total; el += every {
		rep = r.step(every)
	}
	return rep
}

// state is the endpoint's picture over the last window.
func (r *rig) state() model.State { return r.store.State(r.key, window) }

// arrivals is the request rate the run saw: finished requests plus those
// still running or waiting, over the time since the first scrape.
func (r *rig) arrivals(total time.Duration) float64 {
	st := r.store.State(r.key, total)
	var n float64
	for _, c := range st.FinishCount {
		n += c
	}
	n += st.Running.Or(0) + st.Waiting.Or(0)
	return n / st.RateWindow.Seconds()
}

// metrics are the numbers each proof compares, over the last window.
type metrics struct {
	TTFTp90, ITLp99, ITLmean, PreemptPS, Waiting, KV, GenTPS float64
}

func (r *rig) metrics() metrics {
	st := r.state()
	return metrics{
		TTFTp90: st.Latency[model.TTFT].P90.Or(-1), ITLp99: st.Latency[model.ITL].P99.Or(-1), ITLmean: st.Latency[model.ITL].Mean.Or(-1),
		PreemptPS: st.PreemptionsPS.Or(-1), Waiting: st.Waiting.Or(-1), KV: st.KVUsage.Or(-1), GenTPS: st.GenTPS.Or(-1),
	}
}

func (m metrics) String() string {
	return fmt.Sprintf("TTFT p90≈%.3fs ITL p99≈%.3fs mean %.4fs preempt %.2f/s waiting %.0f KV %.0f%% gen %.0f tok/s",
		m.TTFTp90, m.ITLp99, m.ITLmean, m.PreemptPS, m.Waiting, 100*m.KV, m.GenTPS)
}

// apply sets the vLLM flags in an action's change on a sim config: the
// exact text the diagnosis printed, so the proof applies what a user would.
func apply(cfg *sim.Config, change string) error {
	words := strings.Fields(change)
	yes := true
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "(") {
			break // "(from 0.9)": commentary
		}
		arg := func() (string, error) {
			if i+1 >= len(words) {
				return "", fmt.Errorf("%s needs a value in %q", w, change)
			}
			i++
			return words[i], nil
		}
		var err error
		var v string
		switch w {
		case "--enable-chunked-prefill":
			cfg.ChunkedPrefill = &yes
		case "without":
			// "without --no-enable-chunked-prefill": V1's default, on.
			if v, err = arg(); err == nil && v != "--no-enable-chunked-prefill" {
				err = fmt.Errorf("cannot drop %q (in %q) on the simulator", v, change)
			}
			cfg.ChunkedPrefill = &yes
		case "--enable-prefix-caching":
			cfg.PrefixCaching = &yes
		case "--max-num-seqs", "--max-num-batched-tokens", "--max-model-len":
			if v, err = arg(); err == nil {
				var n int
				if n, err = strconv.Atoi(v); err == nil {
					switch w {
					case "--max-num-seqs":
						cfg.MaxNumSeqs = n
					case "--max-num-batched-tokens":
						cfg.MaxNumBatchedTokens = n
					default:
						cfg.MaxModelLen = n
					}
				}
			}
		case "--gpu-memory-utilization":
			if v, err = arg(); err == nil {
				cfg.GPUMemoryUtil, err = strconv.ParseFloat(v, 64)
			}
		case "--kv-cache-dtype":
			if v, err = arg(); err == nil {
				cfg.KVCacheDtype = v
			}
		default:
			return fmt.Errorf("cannot apply %q (in %q) to the simulator", w, change)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
