package sim

import "container/list"

// kvPool is a paged KV cache of fixed-size blocks, as vLLM V1's BlockPool:
// a block is referenced by the running requests that use it; with prefix
// caching, a full prompt block keeps its content hash after its last user
// finishes and stays reusable (it counts as free, and is evicted LRU when a
// fresh block is needed).
type kvPool struct {
	total   int
	used    int // blocks referenced by at least one request
	caching bool
	ref     map[uint64]int           // hashed blocks in use → users
	idle    map[uint64]*list.Element // hashed blocks with no user, still cached
	lru     *list.List               // of uint64, front = most recently freed
}

func newKVPool(blocks int, caching bool) *kvPool {
	return &kvPool{total: blocks, caching: caching, ref: map[uint64]int{}, idle: map[uint64]*list.Element{}, lru: list.New()}
}

// free is vLLM's free-block count: unreferenced blocks, cached or not.
func (k *kvPool) free() int { return k.total - k.used }

// usage is vllm:kv_cache_usage_perc (0–1).
func (k *kvPool) usage() float64 {
	if k.total == 0 {
		return 0
	}
	return float64(k.used) / float64(k.total)
}

// cached reports whether a full block with this hash is reusable.
func (k *kvPool) cached(h uint64) bool {
	if !k.caching {
		return false
	}
	if k.ref[h] > 0 {
		return true
	}
	_, ok := k.idle[h]
	return ok
}

// takeSpace makes room for one new block, evicting the least recently freed
// cached block when only cached blocks are left.
func (k *kvPool) takeSpace() {
	if k.total-k.used-k.lru.Len() <= 0 {
		if e := k.lru.Back(); e != nil {
			delete(k.idle, e.Value.(uint64))
			k.lru.Remove(e)
		}
	}
	k.used++
}

// acquire gives a request a block: h = 0 is a private block (partial or
// generated tokens), otherwise a full prompt block identified by its hash.
// The caller checks free() first.
func (k *kvPool) acquire(h uint64) {
	if h == 0 || !k.caching {
		k.takeSpace()
		return
	}
	if n := k.ref[h]; n > 0 {
		k.ref[h] = n + 1
		return
	}
	if e, ok := k.idle[h]; ok {
		k.lru.Remove(e)
		delete(k.idle, h)
		k.ref[h] = 1
		k.used++
		return
	}
	k.takeSpace()
	k.ref[h] = 1
}

// release drops a request's hold on a block.
func (k *kvPool) release(h uint64) {
	if h == 0 || !k.caching {
		k.used--
		return
	}
	n := k.ref[h] - 1
	if n > 0 {
		k.ref[h] = n
		return
	}
	delete(k.ref, h)
	k.used--
	k.idle[h] = k.lru.PushFront(h)
}
