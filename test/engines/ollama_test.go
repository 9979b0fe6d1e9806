//go:build engines

package engines

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/probe"
)

// ollamaPS is the engine's own /api/ps, read directly to check what the adapter reports.
type ollamaPS struct {
	Models []ollamaPSModel `json:"models"`
}

type ollamaPSModel struct {
	Name      string    `json:"name"`
	Size      int64     `json:"size"`
	SizeVRAM  int64     `json:"size_vram"`
	ExpiresAt time.Time `json:"expires_at"`
	Context   int       `json:"context_length"`
	Details   struct {
		Family       string `json:"family"`
		Quantization string `json:"quantization_level"`
	} `json:"details"`
}

func TestOllamaIdentityBeforeLoad(t *testing.T) {
	s := ollama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Unload first, so this sees the engine with its model on disk but not in memory.
	unloadOllama(t, s)
	id, err := probe.Identify(ctx, http.DefaultClient, s.URL, model.Unknown)
	if err != nil {
		t.Fatalf("Identify: %v", err)
	}
	if id.Engine != model.Ollama || id.Version != s.Version || id.Health != model.HealthUp {
		t.Errorf("identity = %s %q %s (%s), want ollama %q up", id.Engine, id.Version, id.Health, id.HealthDetail, s.Version)
	}
	m := findModel(id.Models, ollamaModel+":latest")
	if m == nil {
		t.Fatalf("models %+v: the created model %s:latest is missing", id.Models, ollamaModel)
	}
	if m.Extra["loaded"] != "false" {
		t.Errorf("an unloaded model says loaded=%q", m.Extra["loaded"])
	}
}

// TestOllamaLoadedModelAndExpiry checks the model a request loaded, and its expiry, as the adapter
// reads them against the engine's /api/ps read just before and just after its scrape.
//
// Ollama's scheduler sets a model's expires_at after the response has gone out (when it handles the
// request's end), and /api/ps reports time.Now()+keep-alive until then: a reading taken at once can
// move under the scrape. The scrape is judged when /api/ps said the same before and after it.
func TestOllamaLoadedModelAndExpiry(t *testing.T) {
	s := ollama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := chat(ctx, s.URL, ollamaModel, "hello", 12, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage == nil || res.Usage.CompletionTokens != 12 || res.Finish != "length" {
		t.Fatalf("non-streaming request: usage %+v finish %q; the tiny model must run to max_tokens", res.Usage, res.Finish)
	}
	readPS := func() (ollamaPSModel, string) {
		t.Helper()
		code, psBody, err := getText(ctx, s.URL+"/api/ps")
		if err != nil || code != http.StatusOK {
			t.Fatalf("/api/ps: %d %v", code, err)
		}
		var ps ollamaPS
		if err := json.Unmarshal([]byte(psBody), &ps); err != nil {
			t.Fatal(err)
		}
		if len(ps.Models) != 1 {
			t.Fatalf("/api/ps lists %d models, want the one just used: %s", len(ps.Models), psBody)
		}
		return ps.Models[0], psBody
	}
	var raw ollamaPSModel
	var scr model.Scrape
	var read time.Time
	for {
		before, psBody := readPS()
		scr = engine.ScrapeOnce(ctx, scrapeConfig(s.URL))
		var after ollamaPSModel
		after, _ = readPS()
		read = time.Now()
		if before.ExpiresAt.Equal(after.ExpiresAt) {
			raw = after
			recordFixture(t, "ollama-"+s.Tag+"-api-ps.json", "", []byte(psBody))
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("Ollama's expires_at never held still across a scrape: %v then %v", before.ExpiresAt, after.ExpiresAt)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The engine set it after the request began and no later than it answered.
	if lo, hi := start.Add(ollamaKeep-time.Minute), read.Add(ollamaKeep+time.Second); raw.ExpiresAt.Before(lo) || raw.ExpiresAt.After(hi) {
		t.Errorf("engine says expires_at %v, %v after the request began and %v after it was read; OLLAMA_KEEP_ALIVE is %v",
			raw.ExpiresAt, raw.ExpiresAt.Sub(start), raw.ExpiresAt.Sub(read), ollamaKeep)
	}

	if scr.Identity.Engine != model.Ollama {
		t.Fatalf("ScrapeOnce detected %q", scr.Identity.Engine)
	}
	if scr.ErrKind == model.ErrNotFound || scr.ErrKind == model.ErrRefused {
		t.Errorf("Ollama has no /metrics by design; the scrape must not report it as an error: %s (%s)", scr.Err, scr.ErrKind)
	}
	m := findModel(scr.Identity.Models, raw.Name)
	if m == nil {
		t.Fatalf("scrape models %+v lack the loaded %s", scr.Identity.Models, raw.Name)
	}
	if m.MaxContext != raw.Context {
		t.Errorf("max context %d, engine says context_length %d", m.MaxContext, raw.Context)
	}
	if m.Extra["loaded"] != "true" {
		t.Errorf("loaded model says loaded=%q", m.Extra["loaded"])
	}
	exp, err := time.Parse(time.RFC3339Nano, m.Extra["expires_at"])
	if err != nil || !exp.Equal(raw.ExpiresAt) {
		t.Errorf("expires_at %q (%v), engine says %v", m.Extra["expires_at"], err, raw.ExpiresAt)
	}
	if m.Extra["size_vram"] != strconv.FormatInt(raw.SizeVRAM, 10) || m.Extra["size"] != strconv.FormatInt(raw.Size, 10) {
		t.Errorf("size %q size_vram %q, engine says %d and %d", m.Extra["size"], m.Extra["size_vram"], raw.Size, raw.SizeVRAM)
	}
	t.Logf("ollama %s /api/ps: %+v; scrape: err=%q kind=%q samples=%d", s.Version, raw, scr.Err, scr.ErrKind, len(scr.Samples))
}

// TestOllamaTokenCounts checks the engine's own token counts against what was asked, over both APIs:
// the streamed OpenAI chunks (one token per chunk) and the native /api/generate eval_count.
func TestOllamaTokenCounts(t *testing.T) {
	s := ollama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := chat(ctx, s.URL, ollamaModel, "count these tokens", 16, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage == nil || res.Usage.CompletionTokens != 16 || res.Chunks != 16 || res.Finish != "length" {
		t.Errorf("stream: %d content chunks, usage %+v, finish %q; want 16 chunks of one token each", res.Chunks, res.Usage, res.Finish)
	}
	recordFixture(t, "ollama-chat-stream.sse", ssePreamble("ollama "+s.Version, 16), res.Transcript)

	body, _ := json.Marshal(map[string]any{"model": ollamaModel, "prompt": "native", "stream": false, "options": map[string]any{"num_predict": 9}})
	var gen struct {
		EvalCount       int   `json:"eval_count"`
		PromptEvalCount int   `json:"prompt_eval_count"`
		EvalDuration    int64 `json:"eval_duration"`
		DoneReason      string
	}
	if err := postJSON(ctx, s.URL+"/api/generate", body, &gen); err != nil {
		t.Fatal(err)
	}
	if gen.EvalCount != 9 || gen.PromptEvalCount <= 0 || gen.EvalDuration <= 0 {
		t.Errorf("/api/generate: eval_count %d prompt_eval_count %d eval_duration %d; want 9, >0, >0", gen.EvalCount, gen.PromptEvalCount, gen.EvalDuration)
	}
}

// unloadOllama asks Ollama to unload every loaded model now (keep_alive 0) and waits until /api/ps is empty.
func unloadOllama(t *testing.T, s *server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"model": ollamaModel, "keep_alive": 0})
	var ignore map[string]any
	if err := postJSON(ctx, s.URL+"/api/generate", body, &ignore); err != nil {
		t.Fatal(err)
	}
	for {
		var ps ollamaPS
		if err := getJSON(ctx, s.URL+"/api/ps", &ps); err != nil {
			t.Fatal(err)
		}
		if len(ps.Models) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("model still loaded after keep_alive 0: %+v", ps)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func findModel(ms []model.ModelInfo, id string) *model.ModelInfo {
	for i := range ms {
		if ms[i].ID == id {
			return &ms[i]
		}
	}
	return nil
}
