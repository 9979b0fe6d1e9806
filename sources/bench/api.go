package bench

import "fmt"

// API is the request protocol the load is sent with.
type API string

const (
	Chat           API = "chat"            // OpenAI /v1/chat/completions, SSE
	Completions    API = "completions"     // OpenAI /v1/completions, SSE
	OllamaGenerate API = "ollama-generate" // Ollama /api/generate, NDJSON
	OllamaChat     API = "ollama-chat"     // Ollama /api/chat, NDJSON
)

// APIs lists the accepted protocols.
var APIs = []API{Chat, Completions, OllamaGenerate, OllamaChat}

// ParseAPI checks a protocol name ("" is Chat).
func ParseAPI(s string) (API, error) {
	if s == "" {
		return Chat, nil
	}
	for _, a := range APIs {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("unknown API %q: use chat, completions, ollama-generate or ollama-chat", s)
}

// Path is the API's route under the base URL.
func (a API) Path() string {
	switch a {
	case Completions:
		return "/v1/completions"
	case OllamaGenerate:
		return "/api/generate"
	case OllamaChat:
		return "/api/chat"
	}
	return "/v1/chat/completions"
}

// Backend is the name `vllm bench serve` gives the protocol.
func (a API) Backend() string {
	switch a {
	case Completions:
		return "openai"
	case OllamaGenerate, OllamaChat:
		return string(a)
	}
	return "openai-chat"
}

// ndjson reports whether the API streams one JSON object per line.
func (a API) ndjson() bool { return a == OllamaGenerate || a == OllamaChat }

// chunk is what one streamed event says, as far as timing needs.
type chunk struct {
	content bool // carries generated text (or reasoning text)
	usage   bool // carries token counts
	prompt  int
	output  int
	finish  bool // says the generation finished (finish_reason, done:true)
	err     bool // an error object
}

// parse reads one event payload (a JSON object) of this API.
func (a API) parse(b []byte) chunk {
	var c chunk
	switch a {
	case Chat:
		c.content = hasText(b, "content") || hasText(b, "reasoning_content") || hasText(b, "reasoning")
	case Completions:
		c.content = hasText(b, "text")
	case OllamaGenerate:
		c.content = hasText(b, "response") || hasText(b, "thinking")
	case OllamaChat:
		c.content = hasText(b, "content") || hasText(b, "thinking")
	}
	if a.ndjson() {
		if isTrue(b, "done") {
			c.finish = true
			c.prompt, c.usage = intKey(b, "prompt_eval_count", 0)
			var ok bool
			c.output, ok = intKey(b, "eval_count", 0)
			c.usage = c.usage && ok
		}
	} else {
		c.finish = notNull(b, "finish_reason")
		if u := findKey(b, "usage", 0); u >= 0 && u < len(b) && b[u] == '{' {
			var ok1, ok2 bool
			c.prompt, ok1 = intKey(b, "prompt_tokens", u)
			c.output, ok2 = intKey(b, "completion_tokens", u)
			c.usage = ok1 && ok2
		}
	}
	c.err = notNull(b, "error")
	return c
}
