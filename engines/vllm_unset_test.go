package engines

import "testing"

// vLLM V0's -1 block hit rate is its "no rate" (prefix caching off) under
// every wrapper that serves it; other names and values are readings.
func TestUnsetIsV0HitRateSentinelOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		v    float64
		want bool
	}{
		{"vllm:gpu_prefix_cache_hit_rate", -1, true},
		{"ray_vllm:cpu_prefix_cache_hit_rate", -1, true},
		{"gpu_prefix_cache_hit_rate", -1, true},      // NIM, bare
		{"vllm_gpu_prefix_cache_hit_rate", -1, true}, // a gateway's ':'→'_'
		{"vllm:gpu_prefix_cache_hit_rate", 0.4, false},
		{"vllm:gpu_prefix_cache_hit_rate", -2, false},
		{"vllm:num_requests_waiting", -1, false},
		{"vllm:xgpu_prefix_cache_hit_rate", -1, false},
	} {
		if got := Unset(c.name, c.v); got != c.want {
			t.Errorf("Unset(%q, %v) = %v, want %v", c.name, c.v, got, c.want)
		}
	}
}
