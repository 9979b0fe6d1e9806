package gpu

import (
	"strings"
	"testing"
)

func TestDecodeThrottle(t *testing.T) {
	for _, c := range []struct {
		mask uint64
		want string
	}{
		{0, ""},
		{reasonGpuIdle, ""},
		{reasonAppClocksSetting | reasonDisplayClock, ""},
		{reasonSwPowerCap, "power cap"},
		{reasonSwPowerCap | reasonGpuIdle, "power cap"},
		{reasonHwSlowdown | reasonHwThermalSlowdown | reasonHwPowerBrake, "HW power brake,HW slowdown,HW thermal"},
		{reasonSwThermalSlowdown | reasonSyncBoost, "thermal,sync boost"},
		{0x200 | reasonSwPowerCap, "power cap,other (0x200)"},
	} {
		got := DecodeThrottle(c.mask)
		if got == nil || strings.Join(got, ",") != c.want {
			t.Errorf("DecodeThrottle(%#x) = %#v, want %q", c.mask, got, c.want)
		}
	}
}
