package sim

import (
	"testing"
	"time"
)

func TestKVPoolPrefixSharingAndEviction(t *testing.T) {
	k := newKVPool(4, true)
	k.acquire(11) // request A: two hashed prompt blocks and a private one
	k.acquire(12)
	k.acquire(0)
	if k.used != 3 || k.free() != 1 {
		t.Fatalf("used %d free %d", k.used, k.free())
	}
	k.acquire(11) // request B shares A's first block: no new space
	if k.used != 3 || k.ref[11] != 2 {
		t.Fatalf("sharing: used %d ref %d", k.used, k.ref[11])
	}
	k.release(11) // A finishes
	k.release(12)
	k.release(0)
	if k.used != 1 || !k.cached(12) || !k.cached(11) {
		t.Fatalf("after A: used %d, 12 cached %v", k.used, k.cached(12))
	}
	if k.usage() != 0.25 {
		t.Errorf("usage %v: cached-but-unused blocks count as free", k.usage())
	}
	// B finishes: 11 idle too. New private blocks take the two blocks that
	// hold nothing first, then evict the least recently freed cached block.
	k.release(11)
	k.acquire(0)
	k.acquire(0)
	if !k.cached(11) || !k.cached(12) {
		t.Errorf("evicted while empty blocks were left")
	}
	k.acquire(0)
	if !k.cached(11) || k.cached(12) {
		t.Errorf("evicted the wrong block: 11 cached %v, 12 cached %v (12 was freed first)", k.cached(11), k.cached(12))
	}
	k.acquire(0)
	if k.cached(11) || k.used != 4 || k.free() != 0 {
		t.Errorf("after filling: used %d, 11 cached %v", k.used, k.cached(11))
	}
}

func TestKVPoolWithoutPrefixCaching(t *testing.T) {
	k := newKVPool(2, false)
	k.acquire(5)
	k.acquire(5)
	if k.used != 2 || k.cached(5) {
		t.Errorf("no caching: used %d, cached %v", k.used, k.cached(5))
	}
	k.release(5)
	k.release(5)
	if k.used != 0 {
		t.Errorf("used %d after release", k.used)
	}
}

// Shared system prompts hit the prefix cache; unique prompts do not.
func TestPrefixCacheHitRateFollowsWorkload(t *testing.T) {
	hit := func(cfg Config) float64 {
		cfg.Background, cfg.Seed = true, 1
		s := newDriven(t, cfg)
		advance(t, s, time.Minute)
		f := families(t, s)
		return value(f, "vllm:prefix_cache_hits_total", "", "") / value(f, "vllm:prefix_cache_queries_total", "", "")
	}
	shared := hit(Config{})
	if shared < 0.2 || shared > 0.8 {
		t.Errorf("healthy traffic (60%% share a 384-token prefix) hit rate %.2f", shared)
	}
	s := newDriven(t, Config{Background: true, Seed: 1, PrefixCaching: ptr(false)})
	advance(t, s, time.Minute)
	if q := value(families(t, s), "vllm:prefix_cache_queries_total", "", ""); q != 0 {
		t.Errorf("prefix caching off but %v tokens queried", q)
	}
}
