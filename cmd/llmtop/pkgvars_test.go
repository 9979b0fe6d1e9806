package main

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Issue 30: run-time state lives in the session that owns it (the monitor's
// monitorRuntime), not in package variables: outside init functions, no
// code of this package assigns to a package-level variable (or a field or
// element of one). The flag structs are written by cobra as the command
// line is parsed, at start-up, through the pointers init hands it.
//
// Not caught here: state changed through a method. (run.go's launched was
// one: the engine llmtop run started is the monitor's now,
// monitorOptions.Launcher.)
func TestNoPackageVariableChangesAfterStartUp(t *testing.T) {
	// stillChanged are the writes not yet moved into the session that owns
	// them, by file and variable: none is left (creds, logFlags and run's
	// launched engine were the last).
	stillChanged := map[string]bool{}
	fset := gotoken.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	vars := map[string]bool{}
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == gotoken.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						vars[n.Name] = true
					}
				}
			}
		}
	}
	var bad []string
	for _, f := range parsed {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			// init, and the register functions only init calls
			if !ok || fd.Body == nil || (fd.Recv == nil && (fd.Name.Name == "init" || strings.HasPrefix(fd.Name.Name, "register"))) {
				continue
			}
			// a function's own names shadow the package's
			local := map[string]bool{}
			ast.Inspect(fd, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.Field:
					for _, id := range x.Names {
						local[id.Name] = true
					}
				case *ast.AssignStmt:
					if x.Tok == gotoken.DEFINE {
						for _, l := range x.Lhs {
							if id, ok := l.(*ast.Ident); ok {
								local[id.Name] = true
							}
						}
					}
				case *ast.ValueSpec:
					for _, id := range x.Names {
						local[id.Name] = true
					}
				}
				return true
			})
			root := func(e ast.Expr) string {
				for {
					switch x := e.(type) {
					case *ast.Ident:
						return x.Name
					case *ast.SelectorExpr:
						e = x.X
					case *ast.IndexExpr:
						e = x.X
					case *ast.StarExpr:
						e = x.X
					default:
						return ""
					}
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				var lhs []ast.Expr
				switch x := n.(type) {
				case *ast.AssignStmt:
					if x.Tok != gotoken.DEFINE {
						lhs = x.Lhs
					}
				case *ast.IncDecStmt:
					lhs = []ast.Expr{x.X}
				}
				for _, l := range lhs {
					if r := root(l); vars[r] && !local[r] {
						pos := fset.Position(l.Pos())
						if !stillChanged[filepath.Base(pos.Filename)+": "+r] {
							bad = append(bad, pos.String()+": "+r)
						}
					}
				}
				return true
			})
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("a package variable changes after start-up: %s", b)
	}
}
