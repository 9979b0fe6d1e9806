package model

import "testing"

func TestDiffAnswers(t *testing.T) {
	a := AnswerSet{Answers: []Answer{
		{Prompt: "p1", Text: "Paris is the capital.", TokenIDs: []int{10, 11, 12, 13}},
		{Prompt: "p2", Text: "same", TokenIDs: []int{1}},
		{Prompt: "p3", Text: "no ids here"},
		{Prompt: "p4", NotChecked: "not checked: timeout"},
		{Prompt: "p5", Text: "only here"},
	}}
	b := AnswerSet{Answers: []Answer{
		{Prompt: "p1", Text: "Paris is a city.", TokenIDs: []int{10, 11, 99}},
		{Prompt: "p2", Text: "same", TokenIDs: []int{1}},
		{Prompt: "p3", Text: "no ids there"},
		{Prompt: "p4", Text: "x"},
	}}
	d := DiffAnswers(a, b)
	if len(d) != 5 {
		t.Fatalf("%d diffs", len(d))
	}
	if d[0].Same || !d[0].Token.OK || d[0].Token.V != 2 || d[0].TokenA != 12 || d[0].TokenB != 99 || d[0].Char != 9 {
		t.Errorf("p1 %+v", d[0])
	}
	if !d[1].Same {
		t.Errorf("p2 %+v", d[1])
	}
	if d[2].Same || d[2].Token.OK || d[2].Char != 7 {
		t.Errorf("p3 %+v (no ids: no token position, the byte still)", d[2])
	}
	if d[3].NotChecked == "" || d[4].NotChecked == "" {
		t.Errorf("p4/p5 %+v %+v", d[3], d[4])
	}
	// One answer the other's prefix: the token past the shorter one's end.
	d = DiffAnswers(AnswerSet{Answers: []Answer{{Prompt: "p", Text: "ab", TokenIDs: []int{1, 2}}}},
		AnswerSet{Answers: []Answer{{Prompt: "p", Text: "a", TokenIDs: []int{1}}}})
	if d[0].Token.V != 1 || d[0].TokenA != 2 || d[0].TokenB != -1 || d[0].Char != 1 {
		t.Errorf("prefix %+v", d[0])
	}
}
