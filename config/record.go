package config

import (
	"fmt"
	"strconv"
	"time"
)

// RecordConfig is the config's `record = true` and its [record] section:
// every monitor session recorded into the state directory, rotated by
// size and age (docs/recording.md).
type RecordConfig struct {
	Enabled bool
	// FileBytes starts a new file once one holds this much; KeepBytes and
	// KeepAge remove the oldest recordings past that total or age.
	FileBytes, KeepBytes int64
	KeepAge              time.Duration
}

// DefaultRecordConfig is off, with 100 MB files, 1 GB and 7 days kept.
var DefaultRecordConfig = RecordConfig{FileBytes: 100 << 20, KeepBytes: 1000 << 20, KeepAge: 7 * 24 * time.Hour}

func (r *RecordConfig) set(k, v string) error {
	if k == "enabled" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("enabled: want true or false, got %s", v)
		}
		r.Enabled = b
		return nil
	}
	if k != "file_mb" && k != "keep_mb" && k != "keep_days" {
		return fmt.Errorf("unknown setting %q in [record] (known: enabled, file_mb, keep_mb, keep_days)", k)
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x <= 0 {
		return fmt.Errorf("%s: want a number > 0, got %s", k, v)
	}
	switch k {
	case "file_mb":
		r.FileBytes = int64(x * (1 << 20))
	case "keep_mb":
		r.KeepBytes = int64(x * (1 << 20))
	default:
		r.KeepAge = time.Duration(x * float64(24*time.Hour))
	}
	return nil
}
