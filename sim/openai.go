package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strings"
	"time"
)

// genRequest is the part of an OpenAI completion/chat request the sim reads.
type genRequest struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MinTokens           int             `json:"min_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Temperature         *float64        `json:"temperature"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// maxBody bounds a request body (prompts up to max-model-len fit easily).
const maxBody = 8 << 20

// promptText flattens the prompt into text (or a token count for token-id
// prompts); the sim counts ~4 bytes per token, plus chat-template overhead.
func (g *genRequest) promptText(chat bool) (string, int, error) {
	if chat {
		if len(g.Messages) == 0 {
			return "", 0, errors.New("messages: Field required")
		}
		var b strings.Builder
		for _, m := range g.Messages {
			b.WriteString("<|" + m.Role + "|>")
			var s string
			if err := json.Unmarshal(m.Content, &s); err == nil {
				b.WriteString(s)
				continue
			}
			var parts []struct {
				Type, Text string
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil && len(m.Content) > 0 {
				return "", 0, fmt.Errorf("messages.content: Input should be a valid string or list of content parts")
			}
			for _, p := range parts {
				b.WriteString(p.Text)
			}
		}
		return b.String(), textTokens(b.String()) + 4*len(g.Messages) + 3, nil
	}
	var s string
	if err := json.Unmarshal(g.Prompt, &s); err == nil {
		return s, max(1, textTokens(s)), nil
	}
	var ids []int
	if err := json.Unmarshal(g.Prompt, &ids); err == nil && len(ids) > 0 {
		return fmt.Sprint(ids), len(ids), nil
	}
	var ss []string
	if err := json.Unmarshal(g.Prompt, &ss); err == nil && len(ss) == 1 {
		return ss[0], max(1, textTokens(ss[0])), nil
	}
	return "", 0, errors.New("prompt: Input should be a valid string, a list of token ids, or a list with one string (the sim serves n=1)")
}

func textTokens(s string) int { return (len(s) + 3) / 4 }

// words are the sim's vocabulary: the text is filler, the timing is the point.
var words = strings.Fields("the model is a simulated engine that streams tokens at the pace a real GPU would under this load and batch size , so latency and throughput behave like vLLM .")

func tokenText(seq uint64, i int) string { return " " + words[(int(seq%97)+i*7)%len(words)] }

func (s *Sim) serveGenerate(w http.ResponseWriter, hr *http.Request, chat bool) {
	received := s.clock.Now() // vLLM's arrival_time: when the server got it
	var g genRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, hr.Body, maxBody))
	if err == nil {
		err = json.Unmarshal(body, &g)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError",
			fmt.Sprintf("[{'type': 'json_invalid', 'loc': ('body', 0), 'msg': 'JSON decode error', 'input': {}, 'ctx': {'error': %q}}]", err.Error()))
		return
	}
	s.throughFront(hr.Context())
	s.mu.Lock()
	c := s.cfg
	s.mu.Unlock()
	if g.Model != "" && g.Model != c.served {
		writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", g.Model))
		return
	}
	text, prompt, err := g.promptText(chat)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	maxTok := g.MaxTokens
	if g.MaxCompletionTokens != nil {
		maxTok = g.MaxCompletionTokens
	}
	if maxTok != nil && *maxTok < 1 {
		writeError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("max_tokens must be at least 1, got %d.", *maxTok))
		return
	}
	asked := 0
	if maxTok != nil {
		asked = *maxTok
	}
	if prompt+asked > c.maxModelLen || prompt >= c.maxModelLen {
		writeError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d output tokens and your prompt contains %d input tokens, for a total of %d tokens. Please reduce the length of the input prompt or the number of requested output tokens.", c.maxModelLen, asked, prompt, prompt+asked))
		return
	}
	if g.MinTokens < 0 {
		writeError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("min_tokens must be greater than or equal to 0, got %d.", g.MinTokens))
		return
	}
	r := &request{prompt: prompt, minTokens: g.MinTokens, out: newStream(), arrival: received}
	r.maxTokens = c.maxModelLen - prompt
	if maxTok != nil {
		r.maxTokens = *maxTok
	}
	if g.MinTokens > r.maxTokens {
		writeError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("min_tokens must be less than or equal to max_tokens=%d, got %d.", r.maxTokens, g.MinTokens))
		return
	}
	r.hashes = textHashes(text, prompt, c.blockSize)
	if g.IgnoreEOS {
		r.target = r.maxTokens
	}
	s.greedy(r, g, chat, text)
	if err := s.submit(r); err != nil {
		if errors.Is(err, errEngineDead) {
			writeError(w, http.StatusInternalServerError, "InternalServerError", err.Error())
			return
		}
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "The server is not ready.")
		return
	}
	s.remember(r)
	rs := newResponder(w, r, chat, g, c.served)
	if g.Stream {
		s.stream(hr, rs)
		return
	}
	s.await(hr, rs)
}

// textHashes chains a hash per full block of the prompt text, so prompts
// that share a prefix share blocks.
func textHashes(text string, tokens, bs int) []uint64 {
	n := tokens / bs
	per := max(1, len(text)/max(1, tokens)) * bs
	return chainHashes(n, func(j int) uint64 {
		lo, hi := min(j*per, len(text)), min((j+1)*per, len(text))
		h := fnv.New64a()
		_, _ = io.WriteString(h, text[lo:hi])
		return h.Sum64() ^ uint64(j)
	})
}

// stream answers with SSE, one chunk per token as the engine emits it.
func (s *Sim) stream(hr *http.Request, rs *responder) {
	rs.startStream()
	sent := 0
	for {
		select {
		case <-rs.r.out.notify:
		case <-hr.Context().Done():
			s.abort(rs.r)
			return
		}
		s.mu.Lock()
		n := len(rs.r.out.times)
		done, finish, err := rs.r.out.done, rs.r.out.finish, rs.r.out.err
		s.mu.Unlock()
		for ; sent < n; sent++ {
			fin := ""
			if done && sent == n-1 && err == nil {
				fin = finish
			}
			rs.tokenChunk(sent, fin)
		}
		if err != nil {
			rs.errorEvent(err)
			return
		}
		if done {
			rs.finishStream(n, finish)
			return
		}
		if rs.flush() != nil {
			s.abort(rs.r)
			return
		}
	}
}

// await answers once the request finishes.
func (s *Sim) await(hr *http.Request, rs *responder) {
	for {
		select {
		case <-rs.r.out.notify:
		case <-hr.Context().Done():
			s.abort(rs.r)
			return
		}
		s.mu.Lock()
		n, done, finish, err := len(rs.r.out.times), rs.r.out.done, rs.r.out.finish, rs.r.out.err
		s.mu.Unlock()
		if err != nil {
			writeError(rs.w, http.StatusInternalServerError, "InternalServerError", err.Error())
			return
		}
		if done {
			rs.whole(n, finish)
			return
		}
	}
}

// record is the sim's own timing of one external request.
type record struct {
	id      string
	arrival time.Time
	tokens  []time.Time
}

const keepRecords = 256

// remember keeps the last external requests so TokenTimes can report them.
func (s *Sim) remember(r *request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.id = fmt.Sprintf("%x", r.seq)
	s.records = append(s.records, r)
	if len(s.records) > keepRecords {
		s.records = s.records[len(s.records)-keepRecords:]
	}
}

// TokenTimes is the sim's own record of an external request, by the id in
// its response ("chatcmpl-<id>" / "cmpl-<id>"): when it arrived and when
// each token was emitted.
func (s *Sim) TokenTimes(id string) (arrival time.Time, tokens []time.Time, ok bool) {
	id = strings.TrimPrefix(strings.TrimPrefix(id, "chatcmpl-"), "cmpl-")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.records {
		if r.id == id {
			return r.arrival, append([]time.Time(nil), r.out.times...), true
		}
	}
	return time.Time{}, nil, false
}
