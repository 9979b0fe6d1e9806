package engines

// LMCache is the LMCache KV cache layer (SERVING-LAYERS.md §3f;
// lmcache/observability.py @0353be82). As vLLM's KV connector its lmcache:
// families appear on the vLLM engine's own /metrics: that endpoint is the
// engine, with LMCache beside it. Alone (its own API server), it is a KV
// cache layer.
var LMCache = Layer{
	ID:       "lmcache",
	Name:     "LMCache",
	Role:     RoleKVCache,
	Prefixes: []string{"lmcache:"},
	Beside:   true,
	Source:   "github.com/LMCache/LMCache lmcache/observability.py @0353be82",
	Reads:    NotJudged,
}
