package model

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"time"
)

// Behaviour is what one behaviour probe (`llmtop probe`, `o` in the
// monitor) saw at an endpoint: a handful of small deterministic requests
// that answer the serving runbooks' first questions when "the model
// generates garbage": is a single call reproducible, how does the server
// render the chat template, does its tokenizer fit the text, does an answer
// stop or run to max_tokens, does it repeat itself, and what exactly
// answered. Every check says what it saw or why it could not look
// (NotChecked); nothing is assumed.
type Behaviour struct {
	Endpoint string    `json:"endpoint"`
	Time     time.Time `json:"time"`
	// Took is how long the probe ran.
	TookS    float64     `json:"took_s"`
	Engine   Engine      `json:"engine"`
	Identity Fingerprint `json:"identity"`

	Determinism Determinism  `json:"determinism"`
	Template    Template     `json:"template"`
	Tokens      Tokenization `json:"tokenization"`
	Stop        StopCheck    `json:"stop"`
	Repetition  Repetition   `json:"repetition"`
	// Golden are the greedy answers to the fixed golden prompts
	// (sources/behaviour.GoldenPrompts): the runs view compares them with
	// the run before, beside the identity, so a release that changed what
	// the model answers shows even when every hash stayed the same.
	Golden []Answer `json:"golden_answers,omitempty"`
	// Partial says why the probe stopped before its last check (the
	// endpoint hung, the deadline passed); empty when it ran through.
	Partial string `json:"partial,omitempty"`
	// Raw are the probe's requests and responses, bounded, with keys and
	// credentials redacted: the repro to paste into a bug report.
	Raw []Exchange `json:"raw,omitempty"`
}

// Fingerprint is the identity of what answered: enough to tell whether a
// later run serves the same template, tokenizer and generation defaults.
// Hashes are short hex digests; empty when the engine does not show the
// input.
type Fingerprint struct {
	Model         string `json:"model"`
	Revision      string `json:"revision,omitempty"` // digest, sha or file the engine names
	MaxContext    int    `json:"max_context,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	TemplateHash  string `json:"template_hash,omitempty"`
	// TemplateFrom says what was hashed: the template's source or the
	// prompt it rendered for the probe's messages.
	TemplateFrom  string `json:"template_from,omitempty"`
	TokenizerHash string `json:"tokenizer_hash,omitempty"` // of the probe texts' token ids
	GenConfigHash string `json:"generation_config_hash,omitempty"`
}

// Determinism is the same chat request twice at temperature 0.
type Determinism struct {
	NotChecked string `json:"not_checked,omitempty"`
	Seed       bool   `json:"seed_sent"` // a seed was sent too
	Identical  bool   `json:"identical"`
	// DivergeChar is the byte where the answers first differ; DivergeToken
	// the token position there (the engine's tokenizer counted the common
	// prefix), unknown where it has no tokenize route.
	DivergeChar  int    `json:"diverge_char,omitempty"`
	DivergeToken Opt    `json:"diverge_token"`
	A            string `json:"a,omitempty"` // each answer from a little before the divergence
	B            string `json:"b,omitempty"`
}

// Template is the chat template as the server renders it.
type Template struct {
	NotChecked string `json:"not_checked,omitempty"`
	Route      string `json:"route,omitempty"`
	// Rendered is the prompt the server built for the probe's messages
	// (or, where it only shows its template, the template's source).
	Rendered string `json:"rendered,omitempty"`
	IsSource bool   `json:"is_source,omitempty"`
	TokenIDs []int  `json:"token_ids,omitempty"`
	// Family is the chat format the model's name or template points to
	// (chatml, llama3, mistral, gemma, phi3…), Expected its markers.
	Family   string   `json:"family,omitempty"`
	Expected []string `json:"expected,omitempty"`
	// Special reports whether the rendering holds the family's markers
	// (any chat marker when the family is unknown).
	Special bool `json:"special_tokens"`
	// Lacks are the template routes this engine does not have.
	Lacks []string `json:"lacks,omitempty"`
	// Chat vs completions: the rendered prompt sent raw to the
	// completions route must be answered as the chat route answered.
	CompareNotChecked string `json:"compare_not_checked,omitempty"`
	Compared          bool   `json:"compared"`
	SameAnswer        bool   `json:"same_answer"`
	ChatAnswer        string `json:"chat_answer,omitempty"`
	CompletionAnswer  string `json:"completion_answer,omitempty"`
}

// Tokenization counts tokens for a few texts against a chars-per-token
// estimate.
type Tokenization struct {
	NotChecked string        `json:"not_checked,omitempty"`
	Route      string        `json:"route,omitempty"`
	Samples    []TokenSample `json:"samples,omitempty"`
}

// TokenSample is one text's token count. Expected is the estimate (plain
// text ~4 characters per token, a typographic or CJK character ~1 token);
// Ratio = Tokens / Expected.
type TokenSample struct {
	Name     string  `json:"name"`
	Text     string  `json:"text"`
	Runes    int     `json:"chars"`
	Tokens   int     `json:"tokens"`
	Expected float64 `json:"expected"`
	Ratio    float64 `json:"ratio"`
}

// StopCheck is a question with a short answer under a generous max_tokens.
type StopCheck struct {
	NotChecked string `json:"not_checked,omitempty"`
	MaxTokens  int    `json:"max_tokens"`
	Finish     string `json:"finish_reason,omitempty"`
	Tokens     Opt    `json:"completion_tokens"`
	Answer     string `json:"answer,omitempty"`
	// StopTokens and Defaults are what the server applies on its own
	// (Ollama's parameters, llama.cpp's default generation settings);
	// DefaultsFrom names the route, or says why they are not known.
	StopTokens   []string          `json:"stop_tokens,omitempty"`
	Defaults     map[string]string `json:"defaults,omitempty"`
	DefaultsFrom string            `json:"defaults_from,omitempty"`
}

// Repetition is the runbooks' repetition measure of the longest answer:
// unique tokens (words where the engine has no tokenizer route) over all,
// and the most repeated n-gram.
type Repetition struct {
	NotChecked  string  `json:"not_checked,omitempty"`
	Unit        string  `json:"unit,omitempty"` // "tokens" or "words"
	Total       int     `json:"total"`
	UniqueRatio float64 `json:"unique_ratio"`
	NGram       string  `json:"ngram,omitempty"`
	NGramCount  int     `json:"ngram_count,omitempty"`
}

// Exchange is one request of the probe and its answer, as sent (keys
// redacted) and as received (bounded).
type Exchange struct {
	Check    string  `json:"check"`
	Method   string  `json:"method"`
	Route    string  `json:"route"`
	Request  string  `json:"request,omitempty"`
	Status   int     `json:"status"`
	Response string  `json:"response,omitempty"`
	Error    string  `json:"error,omitempty"`
	Ms       float64 `json:"ms"`
}

// CleanBehaviour makes a probe result safe for a terminal: every string
// that came from the server cleaned of control sequences, URLs redacted.
func CleanBehaviour(b Behaviour) Behaviour {
	b.Endpoint = RedactURL(b.Endpoint)
	b.Partial = RedactText(b.Partial)
	f := &b.Identity
	f.Model, f.Revision, f.EngineVersion = Clean(f.Model), Clean(f.Revision), Clean(f.EngineVersion)
	d := &b.Determinism
	d.NotChecked, d.A, d.B = Clean(d.NotChecked), Clean(d.A), Clean(d.B)
	t := &b.Template
	t.NotChecked, t.Rendered, t.Family = Clean(t.NotChecked), Clean(t.Rendered), Clean(t.Family)
	t.CompareNotChecked, t.ChatAnswer, t.CompletionAnswer = Clean(t.CompareNotChecked), Clean(t.ChatAnswer), Clean(t.CompletionAnswer)
	b.Tokens.NotChecked = Clean(b.Tokens.NotChecked)
	s := &b.Stop
	s.NotChecked, s.Finish, s.Answer, s.DefaultsFrom = Clean(s.NotChecked), Clean(s.Finish), Clean(s.Answer), Clean(s.DefaultsFrom)
	s.StopTokens = CleanAll(s.StopTokens)
	s.Defaults = CleanMap(s.Defaults, Clean)
	b.Repetition.NGram = Clean(b.Repetition.NGram)
	raw := make([]Exchange, len(b.Raw))
	for i, x := range b.Raw {
		x.Route, x.Request, x.Response, x.Error = RedactText(x.Route), RedactText(x.Request), RedactText(x.Response), RedactText(x.Error)
		raw[i] = x
	}
	if b.Raw == nil {
		raw = nil
	}
	b.Raw = raw
	if b.Golden != nil {
		g := make([]Answer, len(b.Golden))
		for i, a := range b.Golden {
			a.Prompt, a.Text, a.Finish, a.NotChecked = Clean(a.Prompt), Clean(a.Text), Clean(a.Finish), Clean(a.NotChecked)
			g[i] = a
		}
		b.Golden = g
	}
	return b
}

// Digest is a short fingerprint of parts (12 hex digits of SHA-256); ""
// when every part is empty.
func Digest(parts ...string) string {
	if strings.Join(parts, "") == "" {
		return ""
	}
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// GenConfigDigest fingerprints generation defaults and stop tokens in a
// stable order, whichever route they were read from.
func GenConfigDigest(d map[string]string, stops []string) string {
	if len(d) == 0 && len(stops) == 0 {
		return ""
	}
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+d[k])
	}
	st := append([]string(nil), stops...)
	sort.Strings(st)
	return Digest(append(parts, st...)...)
}
