// Package connectors is Strata's connectors runtime: it runs source
// connectors (outside world → stream) and sink connectors (stream →
// outside world), drives their lifecycle, keeps source state crash-safely,
// applies transforms, and exposes a control API, /stats and /metrics.
// cmd/strata-connect wires it up; README.md shows how to run it.
//
// Connectors are built-in (registered by name with RegisterSource and
// RegisterSink, the way database/sql drivers register; see
// connectors/builtin) or external executables speaking PROTOCOL.md.
//
// Lock order: connector.restartMu (TryLock only), connector.lifecycleMu
// (start/stop, held across a launch), Runtime.mu, connector.mu (state the
// API reads, held briefly).
package connectors

import "errors"

// Sentinel errors of the runtime, wrapped with %w.
var (
	// ErrConfig: a runtime or connector configuration is invalid.
	ErrConfig = errors.New("connectors: invalid configuration")
	// ErrUnknownPlugin: a config names a connector nobody registered.
	ErrUnknownPlugin = errors.New("connectors: unknown plugin")
	// ErrState: a state file could not be read or written.
	ErrState = errors.New("connectors: state file")
	// ErrPluginFailed: an external plugin process crashed, hung, or broke
	// the protocol; its connector is put in status Error.
	ErrPluginFailed = errors.New("connectors: plugin process failed")
	// ErrNotFound: no connector with that key.
	ErrNotFound = errors.New("connectors: connector not found")
	// ErrDecode: a message payload does not match the schema.
	ErrDecode = errors.New("connectors: payload does not match schema")
	// ErrProvider: a connector config provider failed.
	ErrProvider = errors.New("connectors: config provider")
)
