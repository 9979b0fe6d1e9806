package sim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// The sim's answers as the behaviour probe sees them (SIMULATED: there is
// no model and no tokenizer). A request that sets temperature 0 is decoded
// greedily: its text and where it would emit EOS follow from the prompt
// the model sees (the chat template's rendering for chat), so the same
// request answers the same, and the rendered prompt sent to
// /v1/completions answers as the chat did. Other requests sample: their
// text follows the request's sequence number. Two scenarios break this the
// way real deployments do:
//   - wrong-template: the chat template renders the bare message text, no
//     special tokens; the model, seeing no turn to end, never emits EOS.
//   - ignores-temperature: the sampler ignores temperature 0.
//
// /tokenize and /detokenize have vLLM's shapes; the sim's tokenizer packs
// up to 3 bytes (whole characters) per token and each chat marker is one
// token, so ids round-trip through /detokenize.

const (
	WrongTemplate      = "wrong-template"
	IgnoresTemperature = "ignores-temperature"
)

// behaviourFaults reports the current segment's behaviour faults.
func (s *Sim) behaviourFaults() (wrongTemplate, ignoresTemp bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.segIdx < 0 || s.segIdx >= len(s.timeline) {
		return false, false
	}
	seg := s.timeline[s.segIdx]
	return seg.has(WrongTemplate), seg.has(IgnoresTemperature)
}

// markers are the chat templates' special tokens, one token id each.
var markers = []string{"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
	"<|im_start|>", "<|im_end|>", "<s>", "</s>", "[INST]", "[/INST]"}

const markerBase = 1 << 27

// renderChat is the model's chat template applied to msgs (with the
// generation prompt), or, with wrong, a template that joins the bare
// contents.
func renderChat(modelID string, msgs []chatMessage, wrong bool) string {
	var b strings.Builder
	id := strings.ToLower(modelID)
	for _, m := range msgs {
		text := contentText(m.Content)
		switch {
		case wrong:
			b.WriteString(text + "\n")
		case strings.Contains(id, "llama-3"):
			if b.Len() == 0 {
				b.WriteString("<|begin_of_text|>")
			}
			b.WriteString("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n" + text + "<|eot_id|>")
		case strings.Contains(id, "mistral"):
			if b.Len() == 0 {
				b.WriteString("<s>")
			}
			b.WriteString("[INST] " + text + "[/INST]")
		default: // Qwen: chatml
			b.WriteString("<|im_start|>" + m.Role + "\n" + text + "<|im_end|>\n")
		}
	}
	switch {
	case wrong || strings.Contains(id, "mistral"):
	case strings.Contains(id, "llama-3"):
		b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	default:
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String()
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// simTokenize splits text into the sim's token ids.
func simTokenize(text string) []int {
	var ids []int
	for len(text) > 0 {
		if k := markerAt(text); k >= 0 {
			ids = append(ids, markerBase+k)
			text = text[len(markers[k]):]
			continue
		}
		n := 0
		for n < len(text) && markerAt(text[n:]) < 0 {
			_, size := utf8.DecodeRuneInString(text[n:])
			if n > 0 && n+size > 3 {
				break
			}
			n += size
		}
		n = min(n, 3) // a 4-byte character takes two tokens
		id := n << 24
		for i := 0; i < n; i++ {
			id |= int(text[i]) << (16 - 8*i)
		}
		ids = append(ids, id)
		text = text[n:]
	}
	return ids
}

func markerAt(s string) int {
	for k, m := range markers {
		if strings.HasPrefix(s, m) {
			return k
		}
	}
	return -1
}

// simDetokenize turns ids back into text.
func simDetokenize(ids []int) (string, error) {
	var b strings.Builder
	for _, id := range ids {
		if id >= markerBase && id < markerBase+len(markers) {
			b.WriteString(markers[id-markerBase])
			continue
		}
		n := id >> 24
		if id < 0 || n < 1 || n > 3 {
			return "", fmt.Errorf("token id %d is out of vocabulary", id)
		}
		for i := 0; i < n; i++ {
			b.WriteByte(byte(id >> (16 - 8*i)))
		}
	}
	return b.String(), nil
}

// tokenizeRequest is vLLM's TokenizeCompletionRequest / TokenizeChatRequest.
type tokenizeRequest struct {
	Model               string        `json:"model"`
	Prompt              *string       `json:"prompt"`
	Messages            []chatMessage `json:"messages"`
	AddGenerationPrompt *bool         `json:"add_generation_prompt"`
	Tokens              []int         `json:"tokens"`
}

func (s *Sim) readTokenize(w http.ResponseWriter, hr *http.Request) (tokenizeRequest, engineConfig, bool) {
	var t tokenizeRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, hr.Body, maxBody))
	if err == nil {
		err = json.Unmarshal(body, &t)
	}
	s.mu.Lock()
	c := s.cfg
	s.mu.Unlock()
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, "BadRequestError", "JSON decode error: "+err.Error())
		return t, c, false
	case t.Model != "" && t.Model != c.served:
		writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", t.Model))
		return t, c, false
	}
	return t, c, true
}

// serveTokenize is vLLM's POST /tokenize: {count, max_model_len, tokens}.
func (s *Sim) serveTokenize(w http.ResponseWriter, hr *http.Request) {
	t, c, ok := s.readTokenize(w, hr)
	if !ok {
		return
	}
	var text string
	switch {
	case len(t.Messages) > 0:
		wrong, _ := s.behaviourFaults()
		text = renderChat(c.model.ID, t.Messages, wrong)
	case t.Prompt != nil:
		text = *t.Prompt
	default:
		writeError(w, http.StatusBadRequest, "BadRequestError", "either prompt or messages is required")
		return
	}
	ids := simTokenize(text)
	writeJSON(w, http.StatusOK, map[string]any{"count": len(ids), "max_model_len": c.maxModelLen, "tokens": ids, "token_strs": nil})
}

// serveDetokenize is vLLM's POST /detokenize: {prompt}.
func (s *Sim) serveDetokenize(w http.ResponseWriter, hr *http.Request) {
	t, _, ok := s.readTokenize(w, hr)
	if !ok {
		return
	}
	text, err := simDetokenize(t.Tokens)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"prompt": text})
}

// greedy sets how a temperature-0 request answers: its words and its EOS
// position from the prompt the model sees. Without the chat template's
// markers (wrong-template) the model never ends its turn: no EOS before
// max_tokens. With ignores-temperature nothing is set: it samples.
func (s *Sim) greedy(r *request, g genRequest, chat bool, promptText string) {
	if g.Temperature == nil || *g.Temperature != 0 {
		return
	}
	wrong, ignores := s.behaviourFaults()
	if ignores {
		return
	}
	seen := promptText
	if chat {
		s.mu.Lock()
		id := s.cfg.model.ID
		s.mu.Unlock()
		seen = renderChat(id, g.Messages, wrong)
	}
	h := fnv.New64a()
	_, _ = io.WriteString(h, seen)
	r.greedyKey = h.Sum64() | 1
	switch {
	case wrong:
		r.target = r.maxTokens
	case r.target == 0:
		r.target = 3 + int(r.greedyKey%9) // a short answer, then EOS
	}
}

// textKey picks the words of r's answer.
func (r *request) textKey() uint64 {
	if r.greedyKey != 0 {
		return r.greedyKey
	}
	return r.seq
}
