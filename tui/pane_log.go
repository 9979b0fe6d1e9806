package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/llmtop/llmtop/model"
)

// logPane is the engine log as a pane of the grid (config: [panes] log =
// true): the newest lines that fit, each wrapped at word boundaries; the
// l view has search and scrolling.
type logPane struct{}

func (*logPane) Title() string { return "Log" }
func (*logPane) Keys() []key.Binding {
	return []key.Binding{relabel(DefaultKeyMap().Logs, "the full log: search, scroll")}
}
func (*logPane) Height(d *Data, w int) int { return max(3, min(12, d.Logs.Len())) }

func (*logPane) View(d *Data, w, h int) string {
	n := d.Logs.Len()
	if n == 0 {
		why := "no log attached: --log FILE or --log-cmd CMD (or --docker, --journal, --kube)"
		if d.Core.LogsOn() {
			why = "no log line yet"
		}
		return d.Styles.Faint.Render(strings.Join(wordWrap(why, w), "\n"))
	}
	multi := len(d.Endpoints()) > 1
	var out []string // newest last, filled from the bottom
	for i := n - 1; i >= 0 && len(out) < h; i-- {
		l := d.Logs.At(i)
		rows := wordWrap(logText(l, multi), w)
		if l.Backlog { // in the log before llmtop started: history
			for j := range rows {
				rows[j] = d.Styles.Faint.Render(rows[j])
			}
		}
		out = append(rows, out...)
	}
	if len(out) > h {
		out = out[len(out)-h:]
	}
	return lines(out, h)
}

// DrawKey: drawn from the log ring only (see Keyed).
func (*logPane) DrawKey(d *Data) uint64 { return d.LogsVersion }

// logText is log line l as the log pane and the log view draw it: led by
// its endpoint when several are watched (multi). Lines arrive clean: the
// log source sanitises what it reads, the recording reader what it reads.
func logText(l model.LogLine, multi bool) string {
	if multi && l.Endpoint != "" {
		return l.Endpoint + " " + l.Text
	}
	return l.Text
}
