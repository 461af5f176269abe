// Package builtin holds the connectors compiled into strata-connect. Each
// file registers its connectors by name in init, the way database/sql
// drivers do; import the package for its side effect:
//
//	import _ "github.com/stratabroker/strata/connectors/builtin"
//
// Sources: random, file, postgres. Sinks: stdout, file, http, postgres.
package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrConfig reports a bad [plugin_config] table.
var ErrConfig = errors.New("builtin connector: invalid plugin_config")

// decodeConfig reads the plugin_config JSON into v, rejecting unknown
// fields.
func decodeConfig(raw []byte, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}
