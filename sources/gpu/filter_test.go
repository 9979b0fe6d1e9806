package gpu

import (
	"reflect"
	"testing"
)

func TestParseIndexList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"", nil, false},
		{"0", []int{0}, false},
		{" 0, 2 ", []int{0, 2}, false},
		{"0-3", []int{0, 1, 2, 3}, false},
		{"1,4-5", []int{1, 4, 5}, false},
		{"a", nil, true},
		{"-1", nil, true},
		{"3-1", nil, true},
		{"0-99999", nil, true},
		{"1,,2", nil, true},
	} {
		got, err := ParseIndexList(c.in)
		if (err != nil) != c.err {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		var idx []int
		for i := 0; i < 16; i++ {
			if got[i] {
				idx = append(idx, i)
			}
		}
		if !reflect.DeepEqual(idx, c.want) || (c.want == nil && got != nil) {
			t.Errorf("%q = %v, want %v", c.in, idx, c.want)
		}
	}
}

func TestFilterCUDAVisibleDevices(t *testing.T) {
	uuids := []string{"GPU-aaaa-0", "GPU-bbbb-1", "GPU-cccc-2", "GPU-dddd-3"}
	for _, c := range []struct {
		name    string
		indices map[int]bool
		cvd     string
		set     bool
		want    []int
		note    string
	}{
		{"unset", nil, "", false, []int{0, 1, 2, 3}, ""},
		{"indices", nil, "2,0", true, []int{0, 2}, "showing CUDA_VISIBLE_DEVICES=2,0"},
		{"uuid prefix", nil, "GPU-bbbb", true, []int{1}, "showing CUDA_VISIBLE_DEVICES=GPU-bbbb"},
		{"stops at invalid", nil, "3,-1,0", true, []int{3}, "showing CUDA_VISIBLE_DEVICES=3"},
		{"empty hides all", nil, "", true, nil, "CUDA_VISIBLE_DEVICES is set but empty or invalid: no GPU is visible"},
		{"MIG only shows all", nil, "MIG-1234", true, []int{0, 1, 2, 3}, "CUDA_VISIBLE_DEVICES names MIG instances: showing all GPUs"},
		{"--gpus and CVD", map[int]bool{1: true, 2: true}, "0,1", true, []int{1}, "showing CUDA_VISIBLE_DEVICES=0,1"},
		{"--gpus only", map[int]bool{3: true}, "", false, []int{3}, ""},
	} {
		f := NewFilter(c.indices, c.cvd, c.set)
		var got []int
		for i, u := range uuids {
			if f.Allows(i, u) {
				got = append(got, i)
			}
		}
		if !reflect.DeepEqual(got, c.want) || f.Note() != c.note {
			t.Errorf("%s: %v note %q, want %v note %q", c.name, got, f.Note(), c.want, c.note)
		}
	}
}
