package connectors_test

import (
	"context"
	"testing"

	"github.com/stratabroker/strata/connectors"
)

// TestExampleConfigsAreValid keeps the README's example directory working:
// the runtime config loads and every connector config parses and names a
// registered built-in.
func TestExampleConfigsAreValid(t *testing.T) {
	cfg, err := connectors.LoadRuntimeConfig("examples/config/connect.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := (&connectors.LocalProvider{Dir: "examples/config/connectors"}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 || cfg.Connectors.ConfigDir != "connectors/examples/config/connectors" {
		t.Fatalf("entries %+v config dir %s", entries, cfg.Connectors.ConfigDir)
	}
	registered := map[string]bool{}
	for _, n := range connectors.Sources() {
		registered["source/"+n] = true
	}
	for _, n := range connectors.Sinks() {
		registered["sink/"+n] = true
	}
	for _, e := range entries {
		if e.Err != nil {
			t.Fatalf("%s: %v", e.Key, e.Err)
		}
		if !registered[e.Kind+"/"+e.Config.Plugin] {
			t.Fatalf("%s names unregistered %s %q", e.Key, e.Kind, e.Config.Plugin)
		}
	}
}
