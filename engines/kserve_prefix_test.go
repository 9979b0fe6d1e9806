package engines

import (
	"slices"
	"testing"
)

// WrapperPrefixes is asked of every family name on every scrape (the role
// check): it is built once, not on each call (19 KB a scrape of vLLM).
func TestWrapperPrefixesBuiltOnce(t *testing.T) {
	if !slices.Contains(WrapperPrefixes(), kservePrefix) {
		t.Fatalf("WrapperPrefixes = %q, want kserve's among them", WrapperPrefixes())
	}
	if a := testing.AllocsPerRun(100, func() { _ = WrapperPrefixes() }); a != 0 {
		t.Fatalf("WrapperPrefixes allocates %.0f times a call, want 0", a)
	}
}
