package gpu

import (
	"fmt"
	"strconv"
	"strings"
)

// Filter restricts the view to some GPUs: the --gpus index list and the
// CUDA_VISIBLE_DEVICES the engine was started with. Both must allow a device.
//
// Indices are NVML indices, as nvidia-smi shows them. CUDA numbers devices the
// same way only with CUDA_DEVICE_ORDER=PCI_BUS_ID (or on identical GPUs);
// UUIDs in CUDA_VISIBLE_DEVICES avoid the question.
type Filter struct {
	indices map[int]bool // --gpus; nil = all
	visible []string     // CUDA_VISIBLE_DEVICES entries; nil = unset
	migOnly bool         // CUDA_VISIBLE_DEVICES named only MIG instances
}

// ParseIndexList parses a --gpus value: "0,2", "0-3", "1,4-5". Empty means
// all GPUs.
func ParseIndexList(s string) (map[int]bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	out := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("--gpus %q: %q is not a GPU index (want e.g. 0,2 or 0-3)", s, part)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(strings.TrimSpace(hi))
			if err != nil || b < a {
				return nil, fmt.Errorf("--gpus %q: %q is not a range of GPU indices (want e.g. 0-3)", s, part)
			}
			if b-a > 1024 {
				return nil, fmt.Errorf("--gpus %q: range %q is too large", s, part)
			}
		}
		for i := a; i <= b; i++ {
			out[i] = true
		}
	}
	return out, nil
}

// NewFilter builds a filter from the --gpus indices (nil = all) and the value
// of CUDA_VISIBLE_DEVICES (set reports whether the variable is set at all).
//
// CUDA_VISIBLE_DEVICES follows CUDA's rules: comma-separated indices or GPU
// UUIDs (a unique prefix such as "GPU-8c16" is enough); the list ends at the
// first entry that is neither (e.g. "-1"); set but empty hides every GPU.
// MIG instance UUIDs cannot be resolved to their GPU here and are skipped.
func NewFilter(indices map[int]bool, cudaVisible string, set bool) Filter {
	f := Filter{indices: indices}
	if !set {
		return f
	}
	f.visible = []string{}
	mig := 0
	for _, e := range strings.Split(cudaVisible, ",") {
		e = strings.TrimSpace(e)
		switch {
		case strings.HasPrefix(e, "GPU-"):
			f.visible = append(f.visible, e)
		case strings.HasPrefix(e, "MIG-"):
			mig++
		default:
			n, err := strconv.Atoi(e)
			if err != nil || n < 0 {
				f.migOnly = mig > 0 && len(f.visible) == 0
				return f
			}
			f.visible = append(f.visible, e)
		}
	}
	f.migOnly = mig > 0 && len(f.visible) == 0
	return f
}

// Allows reports whether the device with this NVML index and UUID is shown.
func (f Filter) Allows(index int, uuid string) bool {
	if f.indices != nil && !f.indices[index] {
		return false
	}
	if f.visible == nil || f.migOnly {
		return true
	}
	for _, e := range f.visible {
		if strings.HasPrefix(e, "GPU-") {
			if uuid != "" && strings.HasPrefix(uuid, e) {
				return true
			}
			continue
		}
		if n, _ := strconv.Atoi(e); n == index {
			return true
		}
	}
	return false
}

// Note explains a filter that hides GPUs, for the pane ("" when nothing to say).
func (f Filter) Note() string {
	switch {
	case f.migOnly:
		return "CUDA_VISIBLE_DEVICES names MIG instances: showing all GPUs"
	case f.visible != nil && len(f.visible) == 0:
		return "CUDA_VISIBLE_DEVICES is set but empty or invalid: no GPU is visible"
	case f.visible != nil:
		return "showing CUDA_VISIBLE_DEVICES=" + strings.Join(f.visible, ",")
	}
	return ""
}
