package logs

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// realLineRows are the catalogue rows held by real lines in
// testdata/real-lines.txt (issue 27: each new row needs one).
var realLineRows = []string{"cuda_device_assert", "vllm_worker_died", "hf_model_not_found", "hf_offline", "hf_trust_remote_code",
	"cuda_no_kernel_image", "vllm_bf16_capability", "vllm_lora_not_found", "vllm_mm_limit",
	"vllm_fp8_marlin", "guided_decoding_error", "vllm_model_loading", "sglang_weights_loaded", "llamacpp_model_buffer", "llamacpp_draft_acceptance"}

// Every real line matches the row it is filed under (and no row before
// it), and every row in realLineRows has one, with where it came from.
func TestRealLines(t *testing.T) {
	f, err := os.Open("testdata/real-lines.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := NewMatcher(Catalogue)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	cited := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.TrimSpace(l) == "":
			cited = false
			continue
		case strings.HasPrefix(l, "#"):
			cited = strings.Contains(l, "#") && strings.Contains(l, "/")
			continue
		}
		id, line, ok := strings.Cut(l, ": ")
		if !ok {
			t.Errorf("not ROW-ID: line: %q", l)
			continue
		}
		if !cited {
			t.Errorf("%s: line without its provenance comment (owner/repo#issue): %q", id, line)
		}
		got, ok := m.Match(line)
		if !ok || got.Pattern.ID != id {
			t.Errorf("%s: %q matched %q (ok=%v)", id, line, got.Pattern.ID, ok)
			continue
		}
		held[id]++
	}
	for _, id := range realLineRows {
		if held[id] == 0 {
			t.Errorf("%s: no real line holds it", id)
		}
	}
}
