package tui

import (
	"encoding/json"

	"github.com/llmtop/llmtop/core"
)

// BuildSnapshot is the screen's numbers as `llmtop snapshot --json` writes
// them: the core's document over the current window, findings included.
func BuildSnapshot(d *Data) core.Document {
	d.Core.SetWindow(d.Window)
	return d.Core.Snapshot()
}

func snapshotBytes(s core.Document) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
