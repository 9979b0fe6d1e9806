package gpu

import "strconv"

// Clock-event ("throttle") reason bits, as defined by nvmlClocksEventReasons
// in nvml.h. DCGM reports the same mask in DCGM_FI_DEV_CLOCKS_EVENT_REASONS
// (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS before DCGM 3.3), so both sources
// decode it here. The values are repeated rather than imported so that the
// DCGM source builds without cgo; a cgo test checks them against go-nvml.
const (
	reasonGpuIdle           uint64 = 0x1
	reasonAppClocksSetting  uint64 = 0x2
	reasonSwPowerCap        uint64 = 0x4
	reasonHwSlowdown        uint64 = 0x8
	reasonSyncBoost         uint64 = 0x10
	reasonSwThermalSlowdown uint64 = 0x20
	reasonHwThermalSlowdown uint64 = 0x40
	reasonHwPowerBrake      uint64 = 0x80
	reasonDisplayClock      uint64 = 0x100
)

// reasonWords lists the reasons worth showing, in the order shown. Idle,
// application-clock and display-clock settings are left out: none of them
// means a loaded GPU is being held back.
var reasonWords = []struct {
	bit  uint64
	word string
}{
	{reasonSwPowerCap, "power cap"},
	{reasonHwPowerBrake, "HW power brake"},
	{reasonHwSlowdown, "HW slowdown"},
	{reasonHwThermalSlowdown, "HW thermal"},
	{reasonSwThermalSlowdown, "thermal"},
	{reasonSyncBoost, "sync boost"},
}

// knownReasons is every bit decoded or deliberately ignored above.
const knownReasons = reasonGpuIdle | reasonAppClocksSetting | reasonSwPowerCap |
	reasonHwSlowdown | reasonSyncBoost | reasonSwThermalSlowdown |
	reasonHwThermalSlowdown | reasonHwPowerBrake | reasonDisplayClock

// DecodeThrottle turns a clock-event reason mask into words ("power cap",
// "thermal", "HW slowdown"…). A bit newer than this table is reported as
// "other (0x…)" rather than dropped. The result is never nil: empty means
// nothing holds the clocks back, while a nil Throttle means "not read".
func DecodeThrottle(mask uint64) []string {
	out := []string{}
	for _, r := range reasonWords {
		if mask&r.bit != 0 {
			out = append(out, r.word)
		}
	}
	if unknown := mask &^ knownReasons; unknown != 0 {
		out = append(out, "other (0x"+strconv.FormatUint(unknown, 16)+")")
	}
	return out
}
