package model

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every type that is an Input is listed in Inputs, which the recording's
// test enumerates: an input cannot be added without its encoding.
func TestInputsListsEveryInput(t *testing.T) {
	listed := map[string]bool{}
	for _, in := range Inputs() {
		listed[reflect.TypeOf(in).Name()] = true
	}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	n := 0
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "input" {
				continue
			}
			id, _ := fd.Recv.List[0].Type.(*ast.Ident)
			if id == nil {
				t.Errorf("%s: input() on a pointer receiver", p)
				continue
			}
			n++
			if !listed[id.Name] {
				t.Errorf("%s is an Input but not in Inputs()", id.Name)
			}
		}
	}
	if n != len(listed) {
		t.Errorf("%d types have input(), Inputs lists %d", n, len(listed))
	}
}
