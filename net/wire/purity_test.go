package wire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPackageStaysPure checks that the package, which the consensus core
// imports, touches no OS facility: no forbidden imports, no time.Now, no
// global math/rand, no go statements (STYLE.md rule 1).
func TestPackageStaysPure(t *testing.T) {
	forbidden := map[string]bool{"os": true, "net": true, "syscall": true, "sync": true, "time": true,
		"math/rand": true, "math/rand/v2": true, "unsafe": true, "os/exec": true, "sync/atomic": true}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if forbidden[path] || strings.HasPrefix(path, "net/") {
				t.Errorf("%s imports %s", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: go statement at %v", name, fset.Position(n.Pos()))
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("only %d files checked", checked)
	}
}
