package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func init() {
	RegisterOverlay(OverlaySpec{ID: "logs", Key: DefaultKeyMap().Logs, New: func() Overlay { return &logView{follow: true, match: -1} }})
}

// logView is the full engine log: scroll, follow, / search with n/N,
// matched lines highlighted. It reads the root's bounded ring.
type logView struct {
	top       int // first shown line (index into the ring) when not following
	match     int // the line n/N last found, -1 for none
	follow    bool
	searching bool
	wrap      bool
	query     string
	input     string
	lastH     int
}

func (*logView) Title() string { return "Log" }
func (*logView) Keys() []key.Binding {
	k := DefaultKeyMap() // the help and the footer show the user's (KeyMap.Current)
	return []key.Binding{k.Follow, k.Search, k.NextMatch, k.PrevMatch, k.Wrap, k.Top, k.Bottom, k.PageUp, k.PageDown}
}

func (v *logView) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	if v.searching {
		switch {
		case key.Matches(msg, d.Keys.Confirm):
			v.searching, v.query = false, v.input
			v.find(d, 1, true)
		case key.Matches(msg, d.Keys.Back):
			v.searching = false
		case msg.Code == tea.KeyBackspace: // text editing, not a command
			if r := []rune(v.input); len(r) > 0 {
				v.input = string(r[:len(r)-1])
			}
		default:
			if t := msg.Key().Text; t != "" {
				v.input += t
			}
		}
		return true, nil
	}
	page := max(1, v.lastH-1)
	k := d.Keys
	switch {
	case key.Matches(msg, k.Search):
		v.searching, v.input = true, ""
	case key.Matches(msg, k.Wrap):
		v.wrap = !v.wrap
	case key.Matches(msg, k.Follow):
		v.follow = !v.follow
		if !v.follow {
			v.top = max(0, d.Logs.Len()-page)
		}
	case key.Matches(msg, k.NextMatch):
		v.find(d, 1, false)
	case key.Matches(msg, k.PrevMatch):
		v.find(d, -1, false)
	case key.Matches(msg, k.Up):
		v.move(d, -1)
	case key.Matches(msg, k.Down):
		v.move(d, 1)
	case key.Matches(msg, k.PageUp):
		v.move(d, -page)
	case key.Matches(msg, k.PageDown):
		v.move(d, page)
	case key.Matches(msg, k.Top):
		v.follow, v.top = false, 0
	case key.Matches(msg, k.Bottom):
		v.follow = true
	case key.Matches(msg, k.Back) && v.query != "":
		v.query = "" // first esc clears the search, the second closes
	default:
		return false, nil
	}
	return true, nil
}

// move scrolls; scrolling up leaves follow mode.
func (v *logView) move(d *Data, delta int) {
	if v.follow {
		v.top = max(0, d.Logs.Len()-max(1, v.lastH-1))
		if delta >= 0 {
			return
		}
		v.follow = false
	}
	v.top = max(0, min(d.Logs.Len()-1, v.top+delta))
}

// find moves to the next (dir 1) or previous (-1) line matching the query;
// from the current position, or including it when fresh.
func (v *logView) find(d *Data, dir int, fresh bool) {
	n := d.Logs.Len()
	if v.query == "" || n == 0 {
		return
	}
	q := strings.ToLower(v.query)
	start := v.match
	if start < 0 || start >= n {
		start = v.top
	}
	if v.follow {
		start = n - 1
	}
	if !fresh {
		start += dir
	}
	for i := 0; i < n; i++ {
		j := ((start+dir*i)%n + n) % n
		if strings.Contains(strings.ToLower(d.Logs.At(j).Text), q) {
			// keep the match in view, half a page down, and the page full
			body := max(1, v.lastH-1)
			v.follow, v.match = false, j
			v.top = max(0, min(j-body/2, n-body))
			return
		}
	}
}

// rows is log line i as shown: cut to w, or wrapped to several rows.
func (v *logView) rows(d *Data, i, w int) []string {
	text := logText(d.Logs.At(i), len(d.Endpoints()) > 1)
	if !v.wrap {
		return []string{fit(text, w)}
	}
	// at spaces (and hyphens), a word longer than the line cut: never
	// mid-word otherwise
	return strings.Split(ansi.Wrap(text, w, ""), "\n")
}

func (v *logView) View(d *Data, w, h int) string {
	s := d.Styles
	v.lastH = h
	n := d.Logs.Len()
	status := fmt.Sprintf("%d lines", n)
	if dropped := d.Logs.Seq - n; dropped > 0 {
		status += fmt.Sprintf(" (%d older dropped)", dropped)
	}
	if k := backlogLines(d); k > 0 {
		status += fmt.Sprintf(" · the first %d before llmtop started (faint)", k)
	}
	if v.follow {
		status += " · following"
	} else {
		status += " · paused (" + d.Keys.Follow.Help().Key + " follows)"
	}
	switch {
	case v.searching:
		status = "/" + v.input + "▏  " + d.Keys.Confirm.Help().Key + " search · " + d.Keys.Back.Help().Key + " cancel"
	case v.query != "" && v.match < 0:
		status += fmt.Sprintf(" · /%s: no match", v.query)
	case v.query != "":
		status += fmt.Sprintf(" · /%s (%s/%s)", v.query, d.Keys.NextMatch.Help().Key, d.Keys.PrevMatch.Help().Key)
	}
	if v.wrap {
		status += " · wrapped"
	}
	body := h - 1
	if n == 0 {
		why := "no log lines yet"
		if err, ok := d.Sources["logs"]; ok && err != "" {
			why = "log source not running: " + err
		} else if !ok && len(d.Sources) > 0 {
			why = "no engine log followed: start llmtop with --log FILE, --docker NAME, --journal UNIT, --kube TARGET or --log-cmd CMD"
		}
		return s.Faint.Render(why) + strings.Repeat("\n", max(0, body)) + s.Faint.Render(status)
	}
	top := v.top
	if v.follow {
		top = max(0, n-body)
	}
	top = max(0, min(top, n-body)) // a full page whenever there are enough lines
	if v.wrap && v.follow {
		// fill the page from the newest line upwards
		rows := 0
		for top = n - 1; top > 0; top-- {
			rows += len(v.rows(d, top, w))
			if rows >= body {
				break
			}
		}
	}
	q := strings.ToLower(v.query)
	out := make([]string, 0, h)
	for i := top; i < n && len(out) < body; i++ {
		l := d.Logs.At(i)
		st := plainInk
		switch {
		case q != "" && strings.Contains(strings.ToLower(l.Text), q):
			st = s.Highlight
		case l.Event != nil:
			st = s.Level(sevLevel(l.Event.Severity))
		case l.Backlog:
			st = s.Faint
		}
		for _, r := range v.rows(d, i, w) {
			out = append(out, st.Render(r))
		}
	}
	if len(out) > body { // a wrapped line cut at the bottom
		out = out[:body]
	}
	for len(out) < body {
		out = append(out, "")
	}
	out = append(out, s.Faint.Render(status))
	return strings.Join(out, "\n")
}

// backlogLines counts the log's first lines that were in it before llmtop
// started (they come first, and only first).
func backlogLines(d *Data) int {
	k := 0
	for k < d.Logs.Len() && d.Logs.At(k).Backlog {
		k++
	}
	return k
}

// Wheel scrolls like the up and down keys (see Wheeler).
func (v *logView) Wheel(delta int, d *Data) { v.move(d, delta) }
