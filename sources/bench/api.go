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
	// text is the answer text's JSON string contents, still escaped (a
	// slice of the payload); reasoning text is not answer text.
	text      []byte
	reasoning bool
	usage     bool // carries token counts
	prompt    int
	output    int
	finish    bool   // says the generation finished (finish_reason, done:true)
	reason    []byte // why: OpenAI's finish_reason, Ollama's done_reason (a slice of the payload)
	err       bool   // an error object
	id        []byte // the response's "id" (a slice of the payload)
}

// parse reads one event payload (a JSON object) of this API in one pass
// over its keys, without allocating.
func (a API) parse(b []byte) chunk {
	var c chunk
	var usage, promptOK, outputOK bool
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end := stringEnd(b, i)
		if end >= len(b) {
			break
		}
		j := skipSpace(b, end+1)
		if j >= len(b) || b[j] != ':' {
			i = end // a string value
			continue
		}
		v := skipSpace(b, j+1)
		key := b[i+1 : end]
		i = end
		switch string(key) {
		case "content", "reasoning_content", "reasoning", "text", "response", "thinking":
			if a.textKey(string(key)) && v+1 < len(b) && b[v] == '"' && b[v+1] != '"' {
				c.content = true
				if reasoningKey(string(key)) {
					c.reasoning = true
				} else if e := stringEnd(b, v); e < len(b) {
					c.text = b[v+1 : e]
				}
			}
		case "finish_reason", "done_reason":
			if (string(key) == "finish_reason") != a.ndjson() && v < len(b) && b[v] == '"' {
				if e := stringEnd(b, v); e < len(b) {
					c.reason = b[v+1 : e]
				}
			}
			c.finish = c.finish || (string(key) == "finish_reason" && !a.ndjson() && !literal(b, v, "null"))
		case "done":
			c.finish = c.finish || (a.ndjson() && literal(b, v, "true"))
		case "usage":
			usage = !a.ndjson() && v < len(b) && b[v] == '{'
		// Token counts: inside "usage" (OpenAI), top level (Ollama).
		case "prompt_tokens", "prompt_eval_count":
			if usage == !a.ndjson() {
				c.prompt, promptOK = intAt(b, v)
			}
		case "completion_tokens", "eval_count":
			if usage == !a.ndjson() {
				c.output, outputOK = intAt(b, v)
			}
		case "id":
			if c.id == nil && v < len(b) && b[v] == '"' {
				if e := stringEnd(b, v); e < len(b) {
					c.id = b[v+1 : e]
				}
			}
		case "error":
			c.err = c.err || !literal(b, v, "null")
		}
	}
	c.usage = promptOK && outputOK && (!a.ndjson() || c.finish)
	return c
}

// reasoningKey reports the keys that carry reasoning rather than the answer.
func reasoningKey(key string) bool {
	return key == "reasoning_content" || key == "reasoning" || key == "thinking"
}

// textKey reports whether key carries generated text in this API.
func (a API) textKey(key string) bool {
	switch a {
	case Chat:
		return key == "content" || key == "reasoning_content" || key == "reasoning"
	case Completions:
		return key == "text"
	case OllamaGenerate:
		return key == "response" || key == "thinking"
	case OllamaChat:
		return key == "content" || key == "thinking"
	}
	return false
}
