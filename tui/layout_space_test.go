package tui

import (
	"strings"
	"testing"
)

// Space goes where the content is: the column with open findings is the
// widest, and a chart (which uses any height) takes a column's spare rows,
// not the GPU list.
func TestSpaceFollowsContent(t *testing.T) {
	m := scenario(stressed, 8, true)
	out := screen(t, m, 200, 60)
	ls := strings.Split(out, "\n")
	top := []rune(ls[3])
	s := string(top)
	diag := strings.Index(s, "6 Diagnosis")
	if diag < 0 {
		t.Fatalf("no diagnosis box on the first grid row:\n%s", out)
	}
	// box widths along the first grid row: split at the corners
	var widths []int
	start := 0
	for i, r := range top {
		if r == '╮' || r == '┓' {
			widths = append(widths, i-start+1)
			start = i + 1
		}
	}
	if len(widths) != 3 || widths[2] < widths[0]+10 || widths[2] < widths[1]+10 {
		t.Errorf("the diagnosis column is not the widest: %v", widths)
	}
	// the GPU box: count its blank content rows
	gpuTop, blank := -1, 0
	for y, l := range ls {
		if strings.Contains(l, "4 GPU") {
			gpuTop = y
			continue
		}
		if gpuTop < 0 {
			continue
		}
		col := []rune(l)[widths[0]+1 : widths[0]+widths[1]-1]
		if strings.ContainsAny(string([]rune(l)[widths[0]:widths[0]+1]), "╰") {
			break
		}
		if strings.TrimSpace(string(col)) == "" {
			blank++
		}
	}
	if gpuTop < 0 || blank > 1 {
		t.Errorf("the GPU box has %d blank rows while the Scheduler chart could use them:\n%s", blank, out)
	}
}
