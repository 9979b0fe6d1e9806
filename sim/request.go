package sim

import (
	"container/list"
	"time"
)

// request is one generation request inside the engine.
type request struct {
	id        string
	seq       uint64
	prompt    int      // prompt tokens
	hashes    []uint64 // content hash of each full prompt block (prefix caching)
	maxTokens int      // max_tokens (resolved)
	target    int      // tokens before the model would emit EOS
	minTokens int
	greedyKey uint64 // temperature 0: the answer's words follow the prompt (sim/behaviour.go)

	arrival   time.Time // when the server received it
	scheduled time.Time // first scheduled (end of queueing)
	firstTok  time.Time
	lastTok   time.Time

	computed  int      // tokens whose KV is on the GPU
	generated int      // output tokens so far
	blocks    []uint64 // held KV blocks: content hash, or 0 for a private block
	cached    int      // prompt tokens served from the prefix cache at first admission
	queued    *list.Element
	running   bool
	done      bool
	finish    string // stop, length, abort, error
	lora      string // the LoRA adapter it asks for ("" none)

	out *stream // nil for background traffic
}

// total is every token the request knows: prompt plus generated.
func (r *request) total() int { return r.prompt + r.generated }

// stream is what an HTTP handler reads: the sim's own record of when each
// token was emitted. Guarded by the Sim's lock; notify (cap 1) wakes the
// reader without ever blocking the engine.
type stream struct {
	times  []time.Time
	done   bool
	finish string
	err    error // engine failure: the handler answers 500
	notify chan struct{}
}

func newStream() *stream { return &stream{notify: make(chan struct{}, 1)} }

func (s *stream) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}
