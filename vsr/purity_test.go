package vsr

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corePackages are the pure packages; missing ones are skipped.
var corePackages = []string{
	"github.com/stratabroker/strata/vsr",
	"github.com/stratabroker/strata/journal",
	"github.com/stratabroker/strata/server/metadata",
	"github.com/stratabroker/strata/server/partition",
	// The group host and its in-memory bindings: the one implementation of
	// how a group commits, bound to a shard's loop or to the simulator.
	"github.com/stratabroker/strata/server/group",
	"github.com/stratabroker/strata/server/group/grouptest",
}

// forbiddenImports may not be imported directly by any package of this
// module that the core reaches.
var forbiddenImports = map[string]bool{
	"os": true, "net": true, "syscall": true, "sync": true, "os/exec": true, "net/http": true,
	"math/rand": true, "math/rand/v2": true, "unsafe": true,
	// Time comes through vsr.Clock and ticks, logs through the host's
	// binding: the core reads no clock and logs nothing itself.
	"time": true, "go.uber.org/zap": true,
}

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Deps       []string
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// TestPurity fails if the consensus core, or any package of this module it
// imports, touches the OS, starts goroutines, reads the wall clock or uses
// global randomness.
func TestPurity(t *testing.T) {
	const module = "github.com/stratabroker/strata"
	args := append([]string{"list", "-e", "-json", "-deps"}, corePackages...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.ImportPath != module && !strings.HasPrefix(p.ImportPath, module+"/") {
			continue
		}
		if p.Error != nil && len(p.GoFiles) == 0 {
			continue // a core package that does not exist yet
		}
		checked++
		for _, f := range p.GoFiles {
			if n := checkFile(t.Errorf, filepath.Join(p.Dir, f)); n < 0 {
				t.Fatalf("cannot parse %s", f)
			}
		}
	}
	if checked < 2 {
		t.Fatalf("checked only %d packages", checked)
	}
}

// checkFile reports every violation in the file at path through errorf
// and returns their number, or -1 if the file does not parse.
func checkFile(errorf func(format string, args ...any), path string) int {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return -1
	}
	count := 0
	report := func(format string, args ...any) {
		count++
		errorf(format, args...)
	}
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if forbiddenImports[p] {
			report("%s imports %q", fset.Position(imp.Pos()), p)
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			report("%s: go statement", fset.Position(n.Pos()))
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "time" && (n.Sel.Name == "Now" || n.Sel.Name == "Since" || n.Sel.Name == "Sleep") {
				report("%s: time.%s", fset.Position(n.Pos()), n.Sel.Name)
			}
		case *ast.RangeStmt:
			if isMapRange(n) {
				report("%s: range over a map (iterate sorted keys)", fset.Position(n.Pos()))
			}
		}
		return true
	})
	return count
}

// isMapRange spots ranges over map literals or make(map...) values in the
// same function; a cheap syntactic check, since the core keeps no maps.
func isMapRange(n *ast.RangeStmt) bool {
	switch x := n.X.(type) {
	case *ast.CompositeLit:
		_, ok := x.Type.(*ast.MapType)
		return ok
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "make" && len(x.Args) > 0 {
			_, ok := x.Args[0].(*ast.MapType)
			return ok
		}
	}
	return false
}

// TestPurityDetects checks the checker on a file that breaks every rule.
func TestPurityDetects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.go")
	src := "package bad\nimport (\"os\"; \"time\"; \"go.uber.org/zap\")\nfunc f() { go f(); _ = time.Now(); _ = os.Args; _ = zap.L; for range map[int]int{} {} }\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if n := checkFile(func(string, ...any) {}, path); n != 6 {
		t.Fatalf("checker found %d of 6 violations", n)
	}
}
