package gguf

import (
	"fmt"
	"unicode/utf8"
)

// Token types of tokenizer.ggml.token_type (llama_token_type).
const (
	TokenNormal  int32 = 1
	TokenUnknown int32 = 2
	TokenControl int32 = 3
	TokenByte    int32 = 6
)

// ChatMLTemplate is the chat template written as tokenizer.chat_template. llama-server renders it
// with its Jinja engine; `ollama create` recognises it as chatml and derives its own template.
const ChatMLTemplate = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

// spaceMark is SentencePiece's stand-in for a space.
const spaceMark = "\u2581"

// Vocab is a SentencePiece-style ("llama") vocabulary: special tokens, the 256 byte-fallback tokens,
// single printable characters and words with all their prefixes, so that the tokenizer's bigram
// merges can reach every word.
type Vocab struct {
	Tokens []string
	Scores []float32
	Types  []int32
	Unk    int
	BOS    int
	EOS    int // <|im_end|>, the end of a chatml turn
}

// chars are the printable single-character tokens. Nothing here can start a chatml stop string
// ("<|im_end|>"), so engines never hold text back as a possible stop match.
const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'-:;()"

var words = []string{
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on",
	"not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
	"you", "were", "their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more",
	"when", "will", "would", "who", "so", "no", "model", "token", "server", "metric", "latency",
	"cache", "request", "batch", "queue", "engine", "hello", "world",
}

// NewVocab builds the vocabulary with the first nWords words of the built-in list.
func NewVocab(nWords int) Vocab {
	v := Vocab{Unk: 0, BOS: 1, EOS: 4}
	add := func(tok string, score float32, typ int32) {
		v.Tokens = append(v.Tokens, tok)
		v.Scores = append(v.Scores, score)
		v.Types = append(v.Types, typ)
	}
	add("<unk>", 0, TokenUnknown)
	add("<s>", 0, TokenControl)
	add("</s>", 0, TokenControl)
	add("<|im_start|>", 0, TokenControl)
	add("<|im_end|>", 0, TokenControl)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), 0, TokenByte)
	}
	seen := map[string]bool{}
	piece := func(p string) {
		if !seen[p] {
			seen[p] = true
			// Longer pieces score higher: SentencePiece merges the best-scoring bigram first.
			add(p, float32(utf8.RuneCountInString(p)), TokenNormal)
		}
	}
	piece(spaceMark)
	for _, c := range chars {
		piece(string(c))
		piece(spaceMark + string(c))
	}
	for _, w := range words[:nWords] {
		for i := 2; i <= len(w); i++ {
			piece(spaceMark + w[:i])
		}
	}
	return v
}
