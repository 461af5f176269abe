package metadata

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// modulePath is this repository's module path.
const modulePath = "github.com/stratabroker/strata"

// forbiddenImports are packages the pure core must not import, directly or
// through any package of this module it imports.
var forbiddenImports = map[string]bool{
	"os": true, "net": true, "syscall": true, "sync": true, "os/exec": true,
	"net/http": true, "math/rand": true, "math/rand/v2": true, "unsafe": true,
}

// TestPurity is the lint rule of STYLE.md rule 1 for this package: it walks
// the non-test sources of the package and of every package of this module
// it reaches, rejecting forbidden imports, time.Now, go statements and
// global math/rand.
func TestPurity(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	checkPurity(t, root, modulePath+"/server/metadata", map[string]bool{})
}

func checkPurity(t *testing.T, root, pkg string, seen map[string]bool) {
	if seen[pkg] {
		return
	}
	seen[pkg] = true
	dir := filepath.Join(root, strings.TrimPrefix(pkg, modulePath))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		timeName := ""
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if forbiddenImports[path] {
				t.Errorf("%s/%s imports %q", pkg, name, path)
			}
			if path == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
			if strings.HasPrefix(path, modulePath+"/") {
				checkPurity(t, root, path, seen)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: go statement in the pure core", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && timeName != "" && x.Name == timeName && n.Sel.Name == "Now" {
					t.Errorf("%s: time.Now in the pure core", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}
