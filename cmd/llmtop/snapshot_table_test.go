package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// A field the GPU does not support reads n/a; one merely not read reads
// --; a lost GPU says so; a snapshot without a driver prints its reason.
func TestPrintGPUs(t *testing.T) {
	var b bytes.Buffer
	printGPUs(&b, model.GPUSnapshot{GPUs: []model.GPU{
		{Index: 0, Name: "GB10", Util: model.Some(97), Temp: model.Some(61), Unsupported: []string{model.GPUFieldMemUsed, model.GPUFieldMemTotal, model.GPUFieldPower}},
		{Index: 1, Name: "H100", Util: model.Some(40), MemUsed: model.Some(8 << 30), MemTotal: model.Some(80 << 30), Power: model.Some(300), Throttle: []string{"power cap"}},
		{Index: 2, Name: "H100", Lost: true, Err: "ERROR_GPU_IS_LOST"},
	}})
	got := b.String()
	for _, want := range []string{
		"GPU 0  GB10  util 97%  mem n/a  power n/a  temp 61°C\n",
		"GPU 1  H100  util 40%  mem 8.0/80.0 GiB  power 300 W  temp --  throttled: power cap\n",
		"GPU 2  H100  lost: ERROR_GPU_IS_LOST\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	b.Reset()
	printGPUs(&b, model.GPUSnapshot{Err: "no NVIDIA driver: libnvidia-ml.so.1 not found"})
	if b.String() != "GPU    no NVIDIA driver: libnvidia-ml.so.1 not found\n" {
		t.Errorf("%q", b.String())
	}
}
