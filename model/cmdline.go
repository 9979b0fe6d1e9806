package model

import (
	"bytes"
	"strings"
)

// SplitCmdline splits /proc/<pid>/cmdline (NUL-separated argv). Processes
// that rewrite their title (setproctitle: "VLLM::EngineCore",
// "sglang::scheduler") leave one space-separated string padded with NULs or
// spaces; that is split on spaces.
func SplitCmdline(raw []byte) []string {
	raw = bytes.TrimRight(raw, "\x00 ")
	if len(raw) == 0 {
		return nil
	}
	if bytes.IndexByte(raw, 0) < 0 {
		return strings.Fields(string(raw))
	}
	parts := strings.Split(string(raw), "\x00")
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
