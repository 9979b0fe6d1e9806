//go:build engines

package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/probe"
)

// llamaProps is the part of llama-server's /props the tests compare against.
type llamaProps struct {
	BuildInfo  string `json:"build_info"`
	ModelPath  string `json:"model_path"`
	ModelAlias string `json:"model_alias"`
	TotalSlots int    `json:"total_slots"`
	Settings   struct {
		NCtx int `json:"n_ctx"`
	} `json:"default_generation_settings"`
}

// llamaSlot is one /slots entry as this llama-server writes it: idle slots carry only id, n_ctx,
// speculative and is_processing; busy ones add the task, the token counts and next_token, which is
// an array (one entry per sequence), not an object. n_prompt_tokens grows while the slot generates:
// it is prompt + generated tokens, the context the slot holds.
type llamaSlot struct {
	ID               int  `json:"id"`
	NCtx             int  `json:"n_ctx"`
	IsProcessing     bool `json:"is_processing"`
	NPrompt          int  `json:"n_prompt_tokens"`
	NPromptProcessed int  `json:"n_prompt_tokens_processed"`
	NPromptCache     int  `json:"n_prompt_tokens_cache"`
	NextToken        []struct {
		NDecoded int `json:"n_decoded"`
		NRemain  int `json:"n_remain"`
	} `json:"next_token"`
}

// rawMetrics reads llama-server's /metrics into name → value (the families have no labels).
func rawMetrics(t *testing.T, ctx context.Context, s *server) (map[string]float64, string) {
	t.Helper()
	code, body, err := getText(ctx, s.URL+"/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("/metrics: %d %v", code, err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("/metrics line %q: want `name value`", line)
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		out[f[0]] = v
	}
	return out, body
}

func TestLlamaServerIdentity(t *testing.T) {
	s := llama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var props llamaProps
	if err := getJSON(ctx, s.URL+"/props", &props); err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := getJSON(ctx, s.URL+"/v1/models", &models); err != nil {
		t.Fatal(err)
	}
	if len(models.Data) != 1 {
		t.Fatalf("/v1/models lists %d models", len(models.Data))
	}
	if props.TotalSlots != llamaSlots || props.Settings.NCtx != llamaCtx/llamaSlots {
		t.Fatalf("engine says %d slots of %d tokens; started with -np %d -c %d", props.TotalSlots, props.Settings.NCtx, llamaSlots, llamaCtx)
	}

	id, err := probe.Identify(ctx, http.DefaultClient, s.URL, model.Unknown)
	if err != nil {
		t.Fatalf("Identify: %v", err)
	}
	if id.Engine != model.LlamaCpp || id.Health != model.HealthUp {
		t.Errorf("engine %q health %q (%s), want llamacpp up", id.Engine, id.Health, id.HealthDetail)
	}
	if id.Version == "" || id.Version != props.BuildInfo {
		t.Errorf("version %q, engine's build_info %q", id.Version, props.BuildInfo)
	}
	if len(id.Models) != 1 || id.Models[0].ID != models.Data[0].ID {
		t.Fatalf("models %+v, engine serves %q", id.Models, models.Data[0].ID)
	}
	if m := id.Models[0]; m.MaxContext != props.Settings.NCtx {
		t.Errorf("max context %d, want the per-slot n_ctx %d (a request cannot use more)", m.MaxContext, props.Settings.NCtx)
	}
	if got := id.Models[0].Extra["slots"]; got != strconv.Itoa(llamaSlots) {
		t.Errorf("slots %q, want %d", got, llamaSlots)
	}
	// The bare URL detects llama.cpp; forcing the engine gives the same identity.
	forced, err := probe.Identify(ctx, http.DefaultClient, s.URL, model.LlamaCpp)
	if err != nil || forced.Engine != id.Engine || forced.Version != id.Version {
		t.Errorf("forced identity %+v (%v) differs from detected %+v", forced, err, id)
	}
	t.Logf("llama-server %s: build_info %q model %q (path %s)", s.Version, props.BuildInfo, models.Data[0].ID, filepath.Base(props.ModelPath))
}

// TestLlamaServerTokenCounters sends requests with known sizes and checks the engine's counters
// and the adapter's against them.
func TestLlamaServerTokenCounters(t *testing.T) {
	s := llama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	before := engine.ScrapeOnce(ctx, scrapeConfig(s.URL))
	rawBefore, _ := rawMetrics(t, ctx, s)
	if !before.OK() || len(before.Samples) != 1 {
		t.Fatalf("scrape before: err %q (%s) hint %q, %d samples", before.Err, before.ErrKind, before.Hint, len(before.Samples))
	}
	const n, maxTokens = 3, 24
	var gen, promptProcessed int
	for i := 0; i < n; i++ {
		// A distinct prompt per request keeps the prompt cache from hiding tokens, though the chat
		// template's common prefix may still be reused: timings.prompt_n says what was processed.
		res, err := chat(ctx, s.URL, "", fmt.Sprintf("request %d of the counter test %d", i, time.Now().UnixNano()), maxTokens, i%2 == 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Usage == nil || res.Timings == nil || res.Usage.CompletionTokens != maxTokens || res.Finish != "length" {
			t.Fatalf("request %d: usage %+v timings %+v finish %q; the test model must run to max_tokens", i, res.Usage, res.Timings, res.Finish)
		}
		if res.Timings.PredictedN != maxTokens {
			t.Errorf("request %d: timings.predicted_n %d, usage says %d", i, res.Timings.PredictedN, res.Usage.CompletionTokens)
		}
		gen += res.Usage.CompletionTokens
		promptProcessed += res.Timings.PromptN
	}
	rawAfter, _ := rawMetrics(t, ctx, s)
	after := engine.ScrapeOnce(ctx, scrapeConfig(s.URL))
	if !after.OK() || len(after.Samples) != 1 {
		t.Fatalf("scrape after: err %q, %d samples", after.Err, len(after.Samples))
	}
	// The engine's own counters against the requests.
	if d := rawAfter["llamacpp:tokens_predicted_total"] - rawBefore["llamacpp:tokens_predicted_total"]; d != float64(gen) {
		t.Errorf("engine: tokens_predicted_total moved %v, requests generated %d", d, gen)
	}
	if d := rawAfter["llamacpp:prompt_tokens_total"] - rawBefore["llamacpp:prompt_tokens_total"]; d != float64(promptProcessed) {
		t.Errorf("engine: prompt_tokens_total moved %v, timings.prompt_n add up to %d", d, promptProcessed)
	}
	// The adapter against the engine.
	b, a := before.Samples[0], after.Samples[0]
	if d := a.Counters[model.GenTokens] - b.Counters[model.GenTokens]; d != float64(gen) {
		t.Errorf("adapter: generation_tokens moved %v, requests generated %d", d, gen)
	}
	if d := a.Counters[model.PromptTokens] - b.Counters[model.PromptTokens]; d != float64(promptProcessed) {
		t.Errorf("adapter: prompt_tokens moved %v, engine processed %d", d, promptProcessed)
	}
	if _, ok := a.Gauges[model.Running]; !ok {
		t.Errorf("adapter: running missing although requests_processing is exposed")
	}
	if a.Gauges[model.Running] != 0 {
		t.Errorf("adapter: running %v while idle", a.Gauges[model.Running])
	}
	// This llama-server has no KV metric: a KV usage may only come from /slots, labelled as such,
	// and with every slot idle it is 0.
	if kv, ok := a.Gauges[model.KVUsage]; ok && (kv != 0 || !strings.Contains(strings.Join(a.Notes, " "), "/slots")) {
		t.Errorf("adapter: kv_cache_usage_ratio %v while idle, notes %q: want 0 derived from /slots, or absent", kv, a.Notes)
	}
	t.Logf("adapter sample: gauges %v counters %v latencies %d notes %v", a.Gauges, a.Counters, len(a.Latencies), a.Notes)
}

// TestLlamaServerSlotsUnderLoad runs one more streaming request than there are slots and checks,
// while they run, the engine's /slots and /metrics against the adapter: every slot busy, one
// request deferred.
//
// The observation must fall inside that load: from the moment the engine shows every slot busy
// and one request deferred until the first request ends, when the deferred one takes its slot.
// The engine's requests_deferred, read after everything else, says whether it did (it goes
// 1 → 0 once, when a slot frees, and while it is 1 every slot stays busy). A load that ended
// before the observation did (a busy machine starved the test, a fast one decoded everything)
// proves nothing either way: it is sent again, twice as long, rather than judged.
func TestLlamaServerSlotsUnderLoad(t *testing.T) {
	s := llama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// 1000 tokens is a few seconds per request on one thread here; the prompt and the answer
	// must fit a slot's context (llamaCtx/llamaSlots).
	for maxTokens := 1000; ; maxTokens *= 2 {
		if slotsUnderLoad(t, ctx, s, maxTokens) {
			return
		}
		if 2*maxTokens+64 > llamaCtx/llamaSlots {
			t.Fatalf("every load ended before the observation did, the longest %d tokens per request", maxTokens)
		}
		t.Logf("the load of %d tokens per request ended before the observation did: again with %d", maxTokens, 2*maxTokens)
	}
}

// slotsUnderLoad is one try of TestLlamaServerSlotsUnderLoad with requests of maxTokens tokens. It
// returns false, with the engine idle again, when the load ended before the observation did.
func slotsUnderLoad(t *testing.T, ctx context.Context, s *server, maxTokens int) bool {
	rawAtStart, _ := rawMetrics(t, ctx, s)
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	type outcome struct {
		res chatResult
		err error
	}
	outcomes := make(chan outcome, llamaSlots+1)
	var wg sync.WaitGroup
	for i := 0; i <= llamaSlots; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := chat(loadCtx, s.URL, "", fmt.Sprintf("load %d", i), maxTokens, true)
			outcomes <- outcome{res, err}
		}(i)
	}
	loadDone := make(chan struct{})
	go func() {
		wg.Wait()
		close(loadDone)
	}()
	ended := func() bool {
		select {
		case <-loadDone:
			return true
		default:
			return false
		}
	}
	// abandon ends this try's requests and waits until the engine has let go of them.
	abandon := func(why string) bool {
		stopLoad()
		<-loadDone
		t.Logf("%d-token load: %s", maxTokens, why)
		awaitLlamaIdle(t, ctx, s.URL, 2*time.Minute)
		return false
	}
	// results are the load's answers once it has ended by itself; a request that failed fails
	// the test (an engine that refused the load is not a load that ended too soon).
	results := func() []chatResult {
		close(outcomes)
		var res []chatResult
		for o := range outcomes {
			if o.err != nil {
				t.Fatalf("a load request failed: %v", o.err)
			}
			res = append(res, o.res)
		}
		return res
	}

	// Wait until the engine itself says all slots are busy and one request waits.
	var raw map[string]float64
	var body string
	for {
		raw, body = rawMetrics(t, ctx, s)
		if raw["llamacpp:requests_processing"] == llamaSlots && raw["llamacpp:requests_deferred"] == 1 {
			break
		}
		if ended() {
			results()
			return abandon(fmt.Sprintf("ended before /metrics showed %d processing + 1 deferred (last: %v)", llamaSlots, raw))
		}
		if ctx.Err() != nil {
			t.Fatalf("engine never showed %d processing + 1 deferred: %v", llamaSlots, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The slots are taken before their prompts are processed: on a busy machine the first
	// /slots read can show every slot processing with nothing decoded yet. Read until a
	// busy slot has decoded a token, then judge that reading.
	var slots []llamaSlot
	var slotsBody string
	for {
		slots, slotsBody = readSlots(t, ctx, s)
		started := false
		for _, sl := range slots {
			if sl.IsProcessing && len(sl.NextToken) > 0 && sl.NextToken[0].NDecoded > 0 {
				started = true
			}
		}
		if started {
			break
		}
		if ended() {
			return abandon("ended before /slots showed a decoded token")
		}
		if ctx.Err() != nil {
			t.Fatalf("/slots never showed a decoded token under load: %s", slotsBody)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The adapter's scrape, bracketed by the engine's own /metrics and /slots read just before
	// and just after it.
	rawBefore, _ := rawMetrics(t, ctx, s)
	scr := engine.ScrapeOnce(ctx, scrapeConfig(s.URL))
	after, _ := readSlots(t, ctx, s)
	rawAfter, _ := rawMetrics(t, ctx, s)
	if rawAfter["llamacpp:requests_deferred"] != 1 || rawAfter["llamacpp:requests_processing"] != llamaSlots {
		return abandon(fmt.Sprintf("a request ended during the observation (requests_processing %v, requests_deferred %v after the scrape)",
			rawAfter["llamacpp:requests_processing"], rawAfter["llamacpp:requests_deferred"]))
	}
	// Everything above was read while every slot was busy and one request deferred: judge it.
	recordFixture(t, "llamacpp-metrics.txt", promPreamble("llama-server "+s.Version,
		fmt.Sprintf("GET /metrics during load: %d slots busy, 1 request deferred (--metrics -np %d -c %d)", llamaSlots, llamaSlots, llamaCtx)), []byte(body))
	recordFixture(t, "llamacpp-"+s.Tag+"-slots-busy.json", "", []byte(slotsBody))
	busy := 0
	for _, sl := range slots {
		if sl.IsProcessing {
			busy++
		}
		if sl.NCtx != llamaCtx/llamaSlots {
			t.Errorf("slot %d n_ctx %d, want %d", sl.ID, sl.NCtx, llamaCtx/llamaSlots)
		}
	}
	if len(slots) != llamaSlots || busy != llamaSlots {
		t.Errorf("/slots: %d slots, %d processing; want %d of %d", len(slots), busy, llamaSlots, llamaSlots)
	}

	// The context the busy slots hold, as the engine says, next to the adapter's KV usage.
	holding := func(slots []llamaSlot) (held, total, decoded int) {
		for _, sl := range slots {
			total += sl.NCtx
			if sl.IsProcessing {
				held += sl.NPrompt
				if len(sl.NextToken) > 0 {
					decoded += sl.NextToken[0].NDecoded
				}
			}
		}
		return held, total, decoded
	}
	held, total, decoded := holding(slots)
	if decoded == 0 {
		t.Fatalf("/slots shows no decoded tokens under load: %+v", slots)
	}
	// Tokens are generated as they are counted, but the counter moves only when a request ends.
	if raw["llamacpp:tokens_predicted_total"] == rawAtStart["llamacpp:tokens_predicted_total"] {
		t.Logf("engine: tokens_predicted_total still %v with %d tokens decoded in flight (it moves when a request finishes)",
			raw["llamacpp:tokens_predicted_total"], decoded)
	}
	if !scr.OK() || len(scr.Samples) != 1 {
		t.Fatalf("scrape under load: err %q, %d samples", scr.Err, len(scr.Samples))
	}
	g := scr.Samples[0].Gauges
	between := func(v float64, name string) bool {
		a, b := rawBefore[name], rawAfter[name]
		return v >= min(a, b) && v <= max(a, b)
	}
	// The slots fill as they decode (a fast model adds thousands of tokens a second), so the
	// adapter's reading lies between /slots read before and after its scrape.
	heldAfter, _, _ := holding(after)
	lo, hi := float64(min(held, heldAfter))/float64(total), float64(max(held, heldAfter))/float64(total)
	// n_prompt_tokens already includes the generated tokens here, and next_token is an array: an
	// adapter that decodes it as an object loses the KV usage, one that adds n_decoded counts twice.
	if kv, ok := g[model.KVUsage]; !ok || kv > hi*1.5+0.02 || kv < lo*0.5-0.02 {
		t.Errorf("adapter: kv_cache_usage_ratio %v (exposed %v), engine's busy slots hold %d then %d of %d tokens (%.3f–%.3f)", kv, ok, held, heldAfter, total, lo, hi)
	}
	if !between(g[model.Running], "llamacpp:requests_processing") {
		t.Errorf("adapter: running %v, engine says requests_processing %v then %v", g[model.Running], rawBefore["llamacpp:requests_processing"], rawAfter["llamacpp:requests_processing"])
	}
	if !between(g[model.Waiting], "llamacpp:requests_deferred") {
		t.Errorf("adapter: waiting %v (gauges %v), engine says requests_deferred %v then %v", g[model.Waiting], g, rawBefore["llamacpp:requests_deferred"], rawAfter["llamacpp:requests_deferred"])
	}

	// The load runs to its end: every request, the deferred one too, streams all its tokens.
	select {
	case <-loadDone:
	case <-ctx.Done():
		t.Fatalf("the %d-token load requests had not ended when the test's time ran out", maxTokens)
	}
	for _, res := range results() {
		if res.Usage == nil || res.Usage.CompletionTokens != maxTokens || res.Chunks != maxTokens {
			t.Errorf("a load request ended with %d chunks, usage %+v; want %d", res.Chunks, res.Usage, maxTokens)
		}
	}
	return true
}

// readSlots reads llama-server's /slots.
func readSlots(t *testing.T, ctx context.Context, s *server) ([]llamaSlot, string) {
	t.Helper()
	code, body, err := getText(ctx, s.URL+"/slots")
	if err != nil || code != http.StatusOK {
		t.Fatalf("/slots: %d %v", code, err)
	}
	var slots []llamaSlot
	if err := json.Unmarshal([]byte(body), &slots); err != nil {
		t.Fatalf("/slots: %v: %s", err, body)
	}
	return slots, body
}

// TestLlamaServerStreamTranscript records (or checks the shape of) a real SSE transcript and
// checks one content chunk per token and the usage chunk with the server's own timings.
func TestLlamaServerStreamTranscript(t *testing.T) {
	s := llama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := chat(ctx, s.URL, "", "hello", 8, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Chunks != 8 || res.Usage == nil || res.Usage.CompletionTokens != 8 {
		t.Errorf("%d content chunks, usage %+v: want 8 chunks, one token each", res.Chunks, res.Usage)
	}
	if res.Timings == nil || res.Timings.PromptMS <= 0 || res.Timings.PredictedMS <= 0 || res.Timings.PredictedN != 8 {
		t.Errorf("usage chunk timings %+v: want prompt_ms, predicted_ms > 0 and predicted_n 8", res.Timings)
	}
	recordFixture(t, "llamacpp-chat-stream.sse", ssePreamble("llama-server "+s.Version, 8), res.Transcript)
}
