package model

import (
	"time"
	"unicode/utf8"
)

// AnswerSet is one endpoint's greedy answers (temperature 0, a fixed seed)
// to a fixed set of prompts, with the identity of what answered:
// `llmtop probe --reference` compares two endpoints' sets, `--golden`
// one endpoint's set against the one it kept from an earlier run.
type AnswerSet struct {
	Endpoint string      `json:"endpoint"`
	Time     time.Time   `json:"time"`
	Engine   Engine      `json:"engine"`
	Identity Fingerprint `json:"identity"`
	Answers  []Answer    `json:"answers"`
}

// Answer is one prompt's greedy answer. TokenIDs are the answer's tokens
// by the engine's own tokenizer (nil where it has no tokenize route);
// NotChecked says why a prompt got no answer.
type Answer struct {
	Prompt     string `json:"prompt"`
	Text       string `json:"text"`
	Finish     string `json:"finish_reason,omitempty"`
	TokenIDs   []int  `json:"token_ids,omitempty"`
	NotChecked string `json:"not_checked,omitempty"`
}

// AnswerDiff is where two answers to one prompt part.
type AnswerDiff struct {
	Prompt string `json:"prompt"`
	Same   bool   `json:"same"`
	// NotChecked says why the two could not be compared (a side without
	// an answer).
	NotChecked string `json:"not_checked,omitempty"`
	// Char is the byte where the texts first differ; Token the position
	// of the first differing token id (absent unless both sides have ids
	// and they differ), with the ids there (-1: that side ended).
	Char           int `json:"diverge_char"`
	Token          Opt `json:"diverge_token"`
	TokenA, TokenB int `json:"-"`
	// A and B are each answer from a little before the divergence.
	A string `json:"a"`
	B string `json:"b"`
}

// DiffAnswers compares b's answers with a's, prompt by prompt (a prompt
// b lacks is not compared).
func DiffAnswers(a, b AnswerSet) []AnswerDiff {
	byPrompt := map[string]Answer{}
	for _, x := range b.Answers {
		byPrompt[x.Prompt] = x
	}
	var out []AnswerDiff
	for _, x := range a.Answers {
		y, ok := byPrompt[x.Prompt]
		d := AnswerDiff{Prompt: x.Prompt}
		switch {
		case !ok:
			d.NotChecked = "not asked of both"
		case x.NotChecked != "" || y.NotChecked != "":
			d.NotChecked = "no answer on both sides: " + x.NotChecked + y.NotChecked
		case x.Text == y.Text && equalInts(x.TokenIDs, y.TokenIDs):
			d.Same = true
		default:
			d.Char = divergeAt(x.Text, y.Text)
			if x.TokenIDs != nil && y.TokenIDs != nil {
				i := 0
				for i < len(x.TokenIDs) && i < len(y.TokenIDs) && x.TokenIDs[i] == y.TokenIDs[i] {
					i++
				}
				d.Token = Some(float64(i))
				d.TokenA, d.TokenB = idAt(x.TokenIDs, i), idAt(y.TokenIDs, i)
			}
			d.A, d.B = aroundByte(x.Text, d.Char), aroundByte(y.Text, d.Char)
		}
		out = append(out, d)
	}
	return out
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func idAt(ids []int, i int) int {
	if i < len(ids) {
		return ids[i]
	}
	return -1
}

// divergeAt is the first byte where a and b differ, on a rune boundary
// (len of the shorter when one is the other's prefix).
func divergeAt(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && i < len(a) && !utf8.RuneStart(a[i]) {
		i--
	}
	return i
}

// aroundByte is s from a little before i, at most 120 bytes.
func aroundByte(s string, i int) string {
	from := max(0, i-24)
	for from > 0 && from < len(s) && !utf8.RuneStart(s[from]) {
		from--
	}
	out := s[min(from, len(s)):]
	if len(out) > 120 {
		cut := 120
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + "…"
	}
	if from > 0 {
		out = "…" + out
	}
	return out
}

// CleanAnswers makes a set safe for a terminal: every text an endpoint
// sent is cleaned, the URL's credentials redacted.
func CleanAnswers(s AnswerSet) AnswerSet {
	s.Endpoint = RedactURL(s.Endpoint)
	f := &s.Identity
	f.Model, f.Revision, f.EngineVersion = Clean(f.Model), Clean(f.Revision), Clean(f.EngineVersion)
	out := make([]Answer, len(s.Answers))
	for i, a := range s.Answers {
		a.Prompt, a.Text, a.Finish, a.NotChecked = Clean(a.Prompt), Clean(a.Text), Clean(a.Finish), Clean(a.NotChecked)
		out[i] = a
	}
	s.Answers = out
	return s
}
