package model

import (
	"reflect"
	"strings"
	"testing"
)

// The GPUField… names are GPU's JSON names, so Unsupported reads the same
// in `llmtop snapshot --json` as the fields it names.
func TestGPUFieldNamesAreJSONNames(t *testing.T) {
	tags := map[string]bool{}
	rt := reflect.TypeOf(GPU{})
	for i := range rt.NumField() {
		tags[strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	for _, f := range []string{GPUFieldUtil, GPUFieldMemUtil, GPUFieldMemUsed, GPUFieldMemTotal,
		GPUFieldPower, GPUFieldPowerLimit, GPUFieldTemp, GPUFieldTempSlowdown, GPUFieldSMClock,
		GPUFieldSMClockMax, GPUFieldMemClock, GPUFieldMemClockMax, GPUFieldFan, GPUFieldPCIeRx,
		GPUFieldPCIeTx, GPUFieldThrottle, GPUFieldECC, GPUFieldProcesses, GPUFieldPCIeGen, GPUFieldPCIeReplays, GPUFieldNVLinks} {
		if !tags[f] {
			t.Errorf("%q is not a JSON name of model.GPU", f)
		}
	}
	g := GPU{Unsupported: []string{GPUFieldFan}}
	if !g.IsUnsupported(GPUFieldFan) || g.IsUnsupported(GPUFieldPower) {
		t.Errorf("IsUnsupported %v", g.Unsupported)
	}
}
