//go:build engines

package engines

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// usage is the OpenAI usage object; llama-server adds prompt_tokens_details.cached_tokens.
type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// timings is llama-server's own per-request clock (absent from Ollama).
type timings struct {
	CacheN      int     `json:"cache_n"`
	PromptN     int     `json:"prompt_n"`
	PromptMS    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMS float64 `json:"predicted_ms"`
}

type chatResult struct {
	Text       string
	Chunks     int // SSE chunks that carried content
	Finish     string
	Usage      *usage
	Timings    *timings
	FirstToken time.Duration // request sent → first content chunk (streaming only)
	Transcript []byte        // the raw SSE body (streaming only)
}

type chatChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *usage   `json:"usage"`
	Timings *timings `json:"timings"`
}

// chat sends one /v1/chat/completions request. Streaming requests ask for the usage chunk.
func chat(ctx context.Context, base, modelName, prompt string, maxTokens int, stream bool) (chatResult, error) {
	req := map[string]any{
		"messages":   []map[string]string{{"role": "user", "content": prompt}},
		"max_tokens": maxTokens,
		"stream":     stream,
	}
	if modelName != "" {
		req["model"] = modelName
	}
	if stream {
		req["stream_options"] = map[string]bool{"include_usage": true}
	}
	body, _ := json.Marshal(req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return chatResult{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	replayable(hreq)
	start := time.Now()
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return chatResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return chatResult{}, fmt.Errorf("chat: HTTP %d: %s", resp.StatusCode, b)
	}
	var res chatResult
	apply := func(c chatChunk) {
		for _, ch := range c.Choices {
			text := ch.Delta.Content + ch.Message.Content
			if text != "" {
				if res.Chunks == 0 {
					res.FirstToken = time.Since(start)
				}
				res.Chunks++
				res.Text += text
			}
			if ch.FinishReason != nil {
				res.Finish = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			res.Usage = c.Usage
		}
		if c.Timings != nil {
			res.Timings = c.Timings
		}
	}
	if !stream {
		var c chatChunk
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
			return res, fmt.Errorf("chat: decode: %w", err)
		}
		apply(c)
		return res, nil
	}
	var transcript bytes.Buffer
	sc := bufio.NewScanner(io.TeeReader(resp.Body, &transcript))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	done := false
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c chatChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return res, fmt.Errorf("chat: bad SSE chunk %q: %w", data, err)
		}
		apply(c)
	}
	res.Transcript = transcript.Bytes()
	if err := sc.Err(); err != nil {
		return res, err
	}
	if !done {
		return res, fmt.Errorf("chat: stream ended without [DONE]")
	}
	return res, nil
}

// getJSON fetches url and decodes its JSON body into v.
func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d: %.200s", url, resp.StatusCode, b)
	}
	return json.Unmarshal(b, v)
}

// getText fetches url and returns status and body.
func getText(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, string(b), err
}

// replayable lets Go's transport resend a POST that failed on a reused keep-alive connection before
// any answer came: llama-server (b1-de3ff81) advertises "Keep-Alive: timeout=5, max=100" but often
// closes the connection after a streamed response, so the next POST on it reads EOF. Go retries
// such a request only when it is marked idempotent.
func replayable(req *http.Request) {
	req.Header.Set("X-Idempotency-Key", strconv.FormatInt(time.Now().UnixNano(), 36))
}
