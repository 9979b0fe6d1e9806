package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// A forming condition's title is cut after a whole word: at 120 columns
// the demo read "decodes stall behind 819… · 3s of 30s", a number that is
// not the one meant.
func TestPendingLineCutsAfterAWord(t *testing.T) {
	d := &Data{Styles: NewStyles(true, true)}
	p := diagnosis.Pending{Finding: diagnosis.Finding{Title: "ITL spikes: decodes stall behind 8192-token prefill chunks", Severity: model.SevWarn},
		Held: 3 * time.Second, Hold: 30 * time.Second}
	got := ansi.Strip(pendingLine(d, p, 56))
	if strings.Contains(got, "819…") || !strings.Contains(got, "behind… · 3s of 30s") {
		t.Errorf("forming line %q", got)
	}
}

// The all-clear's "not checked" list wraps when the pane has rows for it:
// at 200×60 it read "behaviour probe: not ru…" above twenty empty rows.
func TestNotCheckedWrapsWhenThereIsRoom(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(30, healthy) {
		m.Update(s)
	}
	m.Update(press("6"))
	out := screen(t, m, 80, 40)
	i := strings.Index(out, "not checked: ")
	if i < 0 {
		t.Fatalf("no not-checked line:\n%s", out)
	}
	var text []string
	for _, l := range strings.Split(out[i:], "\n") {
		l = strings.Trim(l, "┃│ ")
		if l == "" {
			break
		}
		text = append(text, l)
	}
	all := strings.Join(text, " ")
	if len(text) < 2 || strings.Contains(all, "…") || !strings.Contains(all, "behaviour probe") {
		t.Errorf("not-checked list cut instead of wrapped: %q\n%s", all, out)
	}
}

// Each wrapped line has the room its own lead leaves: the rest lines of
// "not checked: …" were wrapped at the first line's room and a lead wider
// than the first (the runs view's benchmark line) ran past the width.
func TestWrapIndentGivesEachLineItsOwnRoom(t *testing.T) {
	text := "engine metrics, GPU readings, benchmark results, replicas, behaviour probe: not run in this run"
	got := wrapIndent("not checked: ", "  ", text, 58)
	want := []string{"not checked: engine metrics, GPU readings, benchmark", "  results, replicas, behaviour probe: not run in this run"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q", got)
	}
	for _, l := range wrapIndent("", "    ", "aaaaaaaaaa bbbbbbbbbb cccccccc dddddddddd eeeeeeeeee", 21) {
		if w := ansi.StringWidth(l); w > 21 {
			t.Errorf("line of %d cells past 21: %q", w, l)
		}
	}
	// a word broken at the first line's end goes on whole
	got = wrapIndent("ab ", "", "0123456789abcdef tail", 10)
	if strings.Join(got, "|") != "ab 0123456|789abcdef|tail" {
		t.Errorf("broken word: %q", got)
	}
}

// The all-clear view's "not checked" lines are kept while what they say,
// the width and the styles are the same: every kept answer is the one
// drawn from scratch, through lists that change, widths that change with
// the same list, and themes that change with the same list and width.
func TestNotCheckedLinesKeptAreDrawnFromScratch(t *testing.T) {
	long := "GPU readings, benchmark results, replicas, behaviour probe"
	// each walk ends with the list the next starts with: a width or a
	// theme changes alone there
	lists := []string{long, long, "GPU readings, replicas", "", "GPU readings, replicas", long}
	d := &Data{}
	kept := 0
	for _, st := range []*Styles{NewStyles(true, false), NewStyles(false, false), NewStyles(true, true)} {
		d.Styles = st
		for _, w := range []int{66, 30, 120, 66} {
			for _, m := range lists {
				was := d.notChecked
				got := d.notCheckedAt(m, w)
				if was.ok && d.notChecked.ok && slices.Equal(was.nc, d.notChecked.nc) && was.short == d.notChecked.short && was.m == m {
					kept++
				}
				d.notChecked = notCheckedLines{}
				want := d.notCheckedAt(m, w)
				d.notChecked = got
				if !slices.Equal(got.nc, want.nc) || got.short != want.short {
					t.Fatalf("%q at width %d (theme %p): kept %q / %q, drawn from scratch %q / %q", m, w, st, got.nc, got.short, want.nc, want.short)
				}
			}
		}
	}
	if kept == 0 {
		t.Fatal("never kept: the lines were wrapped again every time")
	}
}
