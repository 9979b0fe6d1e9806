package bench

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
)

// words are short common English words; each is about one token in the
// tokenizers of the usual models, so n words make a prompt of about n tokens.
var words = strings.Fields(`the of and to in is it you that he was for on are with as his they be at one have
this from or had by hot but some what there we can out other were all your when up use word how said an each
she which do their time if will way about many then them would write like so these her long make thing see him
two has look more day could go come did my sound no most number who over know water than call first people may
down side been now find any new work part take get place made live where after back little only round man year
came show every good me give our under name very through just form much great think say help low line before
turn cause same mean differ move right boy old too does tell sentence set three want air well also play small end
put home read hand port large spell add even land here must big high such follow act why ask men change went
light kind off need house picture try us again animal point mother world near build self earth father head stand
own page should country found answer school grow study still learn plant cover food sun four thought let keep
eye never last door between city tree cross since hard start might story saw far sea draw left late run while
press close night real life few stop open seem together next white children begin got walk example ease paper`)

// promptText builds request i's prompt: prefix shared words, then words
// drawn from a generator seeded with (seed, i), n words in all.
func promptText(seed uint64, i, n, prefix int) string {
	var b strings.Builder
	b.Grow(n * 6)
	pr := rand.New(rand.NewPCG(seed, ^uint64(0)))
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	for k := 0; k < n; k++ {
		if k > 0 {
			b.WriteByte(' ')
		}
		src := r
		if k < prefix {
			src = pr
		}
		b.WriteString(words[src.IntN(len(words))])
	}
	return b.String()
}

// body builds request i's JSON body. extras adds ignore_eos and min_tokens
// so that the server generates exactly OutputLen tokens where it accepts them.
func (c *Config) body(model string, i int, extras bool) []byte {
	prompt := promptText(c.Seed, i, c.InputLen, c.PrefixLen)
	msgs := []map[string]string{{"role": "user", "content": prompt}}
	var m map[string]any
	switch c.API {
	case OllamaGenerate, OllamaChat:
		m = map[string]any{"model": model, "stream": true,
			"options": map[string]any{"num_predict": c.OutputLen, "seed": c.Seed}}
		if c.API == OllamaChat {
			m["messages"] = msgs
		} else {
			m["prompt"] = prompt
		}
	default:
		m = map[string]any{"model": model, "stream": true, "max_tokens": c.OutputLen,
			"stream_options": map[string]bool{"include_usage": true}}
		if c.API == Completions {
			m["prompt"] = prompt
		} else {
			m["messages"] = msgs
		}
		if extras {
			m["ignore_eos"] = true
			m["min_tokens"] = c.OutputLen
		}
	}
	b, _ := json.Marshal(m) // maps of strings and numbers always marshal
	return b
}
