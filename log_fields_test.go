package strata_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// snakeCase is the shape of every log field key.
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// entityKeys are keys that name an entity: a number must be <key>_id (as
// in Iggy's JSON), the bare key is a name.
var entityKeys = map[string]bool{"stream": true, "topic": true, "partition": true, "group": true, "user": true,
	"connection": true, "session": true, "client": true, "consumer": true}

// numericField are the zap constructors of numbers.
var numericField = regexp.MustCompile(`^(Uint|Int)(8|16|32|64)?s?$|^Uintptr$`)

// TestLogFieldKeysAgree checks the field keys of every zap call in the
// programs (server/logging's rules): snake_case; a key ending in _id is a
// number; an entity's number is <entity>_id and its bare key is its name
// ("partition" held a directory in one line and an id in the next, and
// strata-connect's "partition" was the server's "partition_id"); a
// "partition" is never a string (a directory is "dir").
func TestLogFieldKeysAgree(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "testdata", "local_data", "local_state":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		zapName := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"go.uber.org/zap"` {
				zapName = "zap"
				if imp.Name != nil {
					zapName = imp.Name.Name
				}
			}
		}
		if zapName == "" {
			return nil
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || pkg.Name != zapName {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			switch sel.Sel.Name {
			case "String", "Strings", "Stringer", "Int", "Int8", "Int16", "Int32", "Int64", "Ints", "Int64s", "Int32s", "Uint", "Uint8", "Uint16",
				"Uint32", "Uint64", "Uints", "Uint32s", "Uint64s", "Bool", "Bools", "Duration", "Durations", "Float64", "Float32", "Any",
				"ByteString", "Binary", "Time", "Reflect", "Object", "Array", "Namespace":
			default:
				return true
			}
			key, _ := strconv.Unquote(lit.Value)
			at := fset.Position(lit.Pos())
			numeric := numericField.MatchString(sel.Sel.Name)
			switch {
			case !snakeCase.MatchString(key):
				t.Errorf("%s: log key %q is not snake_case", at, key)
			case strings.HasSuffix(key, "_id") && !numeric:
				t.Errorf("%s: log key %q ends in _id but holds a %s", at, key, sel.Sel.Name)
			case entityKeys[key] && numeric:
				t.Errorf("%s: log key %q holds a number: write %s_id (server/logging.%s)", at, key, key, exportedID(key))
			case key == "partition":
				t.Errorf("%s: log key \"partition\" holds a %s: write partition_id for its id or dir for its directory", at, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d files log", checked)
	}
}

func exportedID(key string) string {
	return strings.ToUpper(key[:1]) + key[1:] + "ID"
}
