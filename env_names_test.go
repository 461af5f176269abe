package strata_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stratabroker/strata/connectors"
	"github.com/stratabroker/strata/server/config"
)

// strataName matches a STRATA_ variable name; one that ends in "_" is a
// prefix or a pattern (STRATA_CONNECTORS_{SOURCE|SINK}_..., STRATA_<KEY>).
var strataName = regexp.MustCompile(`STRATA_[A-Z0-9_]*`)

// documentedTypos are misspellings the README shows on purpose, with the
// error they get.
var documentedTypos = map[string]bool{"STRATA_TCP_ADRESS": true, "STRATA_HTTP_ENABLE": true, "STRATA_CONNECTORS_STRATA_ADRESS": true}

// TestEveryStrataVariableIsKnown: every STRATA_ name in the programs'
// sources, the READMEs, the Makefile, CI and the example configs is one
// strata-server or strata-connect reads, or another program's variable
// listed in config.OtherVariables / OtherPrefixes. strata-server refuses
// any other STRATA_ variable at start, so a program that reads a new one
// must list it there, and a README naming a variable nobody reads (or the
// old STRATA_HTTP_JWT_SECRET) fails here. Tests name their own variables
// STRATA_TEST_*.
func TestEveryStrataVariableIsKnown(t *testing.T) {
	keys := map[string]bool{}
	for _, name := range config.EnvNames() {
		keys[name] = true
	}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "local_data", "local_state", "testdata", ".tools", "certs":
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		ext := filepath.Ext(name)
		if strings.HasSuffix(name, "_test.go") || !(ext == ".go" || ext == ".md" || ext == ".toml" || name == "Makefile" || path == filepath.Join(".ci", "run")) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for _, match := range strataName.FindAllString(string(data), -1) {
			if strings.HasSuffix(match, "_") {
				continue
			}
			switch {
			case keys[match]:
			case documentedTypos[match] && ext == ".md":
			case strings.HasPrefix(match, "STRATA_CONNECTORS_"):
				if !connectors.IsEnvName(match) {
					t.Errorf("%s: %s is no variable strata-connect reads", path, match)
				}
			case config.IsOtherVariable(match):
			case config.RenamedVariables[match] != "" && filepath.Dir(path) == filepath.Join("server", "config"):
			default:
				t.Errorf("%s: %s is no config key (config.EnvNames) nor listed in config.OtherVariables; strata-server refuses it", path, match)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked", checked)
	}
}
