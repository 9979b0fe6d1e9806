package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responder writes one request's answer in vLLM's OpenAI shapes.
type responder struct {
	w       http.ResponseWriter
	fl      http.Flusher
	r       *request
	chat    bool
	usage   bool
	id      string
	model   string
	created int64
	err     error
}

func newResponder(w http.ResponseWriter, r *request, chat bool, g genRequest, model string) *responder {
	rs := &responder{w: w, r: r, chat: chat, model: model, created: r.arrival.Unix()}
	rs.fl, _ = w.(http.Flusher)
	rs.usage = g.StreamOptions != nil && g.StreamOptions.IncludeUsage
	if chat {
		rs.id = "chatcmpl-" + r.id
	} else {
		rs.id = "cmpl-" + r.id
	}
	return rs
}

type usageJSON struct {
	PromptTokens     int `json:"prompt_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

func (rs *responder) object() string {
	if rs.chat {
		return "chat.completion.chunk"
	}
	return "text_completion"
}

func (rs *responder) event(v any) {
	if rs.err != nil {
		return
	}
	b, _ := json.Marshal(v)
	_, rs.err = fmt.Fprintf(rs.w, "data: %s\n\n", b)
}

func (rs *responder) flush() error {
	if rs.err == nil && rs.fl != nil {
		rs.fl.Flush()
	}
	return rs.err
}

func (rs *responder) head() map[string]any {
	return map[string]any{"id": rs.id, "object": rs.object(), "created": rs.created, "model": rs.model}
}

// startStream sends the SSE headers and, for chat, the role-only chunk that
// vLLM sends before the first token.
func (rs *responder) startStream() {
	h := rs.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	rs.w.WriteHeader(http.StatusOK)
	if rs.chat {
		c := rs.head()
		c["choices"] = []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "logprobs": nil, "finish_reason": nil}}
		rs.event(c)
	}
	_ = rs.flush()
}

func (rs *responder) choice(text string, finish string) map[string]any {
	var fin any
	if finish != "" {
		fin = finish
	}
	if rs.chat {
		return map[string]any{"index": 0, "delta": map[string]any{"content": text}, "logprobs": nil, "finish_reason": fin, "stop_reason": nil}
	}
	return map[string]any{"index": 0, "text": text, "logprobs": nil, "finish_reason": fin, "stop_reason": nil}
}

func (rs *responder) tokenChunk(i int, finish string) {
	c := rs.head()
	c["choices"] = []any{rs.choice(tokenText(rs.r.seq, i), finish)}
	rs.event(c)
}

func (rs *responder) finishStream(n int, _ string) {
	if rs.usage {
		c := rs.head()
		c["choices"] = []any{}
		c["usage"] = usageJSON{rs.r.prompt, rs.r.prompt + n, n}
		rs.event(c)
	}
	rs.done()
}

func (rs *responder) done() {
	if rs.err == nil {
		_, rs.err = fmt.Fprint(rs.w, "data: [DONE]\n\n")
	}
	_ = rs.flush()
}

// errorEvent is how vLLM ends a stream whose engine failed.
func (rs *responder) errorEvent(err error) {
	rs.event(map[string]any{"error": map[string]any{"message": err.Error(), "type": "InternalServerError", "param": nil, "code": 500}})
	rs.done()
}

// whole writes a non-streaming response.
func (rs *responder) whole(n int, finish string) {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(tokenText(rs.r.seq, i))
	}
	var ch map[string]any
	if rs.chat {
		ch = map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": b.String(), "reasoning_content": nil, "tool_calls": []any{}},
			"logprobs": nil, "finish_reason": finish, "stop_reason": nil}
	} else {
		ch = map[string]any{"index": 0, "text": b.String(), "logprobs": nil, "finish_reason": finish, "stop_reason": nil, "prompt_logprobs": nil}
	}
	obj := "chat.completion"
	if !rs.chat {
		obj = "text_completion"
	}
	writeJSON(rs.w, http.StatusOK, map[string]any{"id": rs.id, "object": obj, "created": rs.created, "model": rs.model,
		"choices": []any{ch}, "usage": usageJSON{rs.r.prompt, rs.r.prompt + n, n}, "prompt_logprobs": nil})
}
