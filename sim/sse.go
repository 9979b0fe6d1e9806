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

// chunk is one SSE event in vLLM's field order (ChatCompletionStreamResponse
// / CompletionStreamResponse, serialised without unset fields).
type chunk struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []any      `json:"choices"`
	Usage   *usageJSON `json:"usage,omitempty"`
}

type delta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

type chatChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
	StopReason   any     `json:"stop_reason,omitempty"`
}

type textChoice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
	StopReason   any     `json:"stop_reason"`
}

func (rs *responder) chunk(choices ...any) chunk {
	if choices == nil {
		choices = []any{}
	}
	return chunk{ID: rs.id, Object: rs.object(), Created: rs.created, Model: rs.model, Choices: choices}
}

// startStream sends the SSE headers and, for chat, the role-only chunk that
// vLLM sends before the first token.
func (rs *responder) startStream() {
	h := rs.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	rs.w.WriteHeader(http.StatusOK)
	if rs.chat {
		rs.event(rs.chunk(chatChoice{Delta: delta{Role: "assistant"}}))
	}
	_ = rs.flush()
}

func (rs *responder) tokenChunk(i int, finish string) {
	text := tokenText(rs.r.textKey(), i)
	var fin *string
	if finish != "" {
		fin = &finish
	}
	if rs.chat {
		c := chatChoice{Delta: delta{Content: text}, FinishReason: fin}
		if fin != nil {
			c.StopReason = json.RawMessage("null") // vLLM sets it (to null) on the last chunk
		}
		rs.event(rs.chunk(c))
		return
	}
	rs.event(rs.chunk(textChoice{Text: text, FinishReason: fin}))
}

func (rs *responder) finishStream(n int, _ string) {
	if rs.usage {
		c := rs.chunk()
		c.Usage = &usageJSON{rs.r.prompt, rs.r.prompt + n, n}
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

// whole writes a non-streaming response in vLLM's field order.
func (rs *responder) whole(n int, finish string) {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(tokenText(rs.r.textKey(), i))
	}
	type message struct {
		Role             string `json:"role"`
		ReasoningContent any    `json:"reasoning_content"`
		Content          string `json:"content"`
		ToolCalls        []any  `json:"tool_calls"`
	}
	type choice struct {
		Index          int      `json:"index"`
		Message        *message `json:"message,omitempty"`
		Text           *string  `json:"text,omitempty"`
		Logprobs       any      `json:"logprobs"`
		FinishReason   string   `json:"finish_reason"`
		StopReason     any      `json:"stop_reason"`
		PromptLogprobs any      `json:"prompt_logprobs,omitempty"`
	}
	c := choice{FinishReason: finish}
	obj := "chat.completion"
	if rs.chat {
		c.Message = &message{Role: "assistant", Content: b.String(), ToolCalls: []any{}}
	} else {
		obj = "text_completion"
		text := b.String()
		c.Text = &text
	}
	writeJSON(rs.w, http.StatusOK, struct {
		ID             string    `json:"id"`
		Object         string    `json:"object"`
		Created        int64     `json:"created"`
		Model          string    `json:"model"`
		Choices        []choice  `json:"choices"`
		Usage          usageJSON `json:"usage"`
		PromptLogprobs any       `json:"prompt_logprobs"`
	}{rs.id, obj, rs.created, rs.model, []choice{c}, usageJSON{rs.r.prompt, rs.r.prompt + n, n}, nil})
}
