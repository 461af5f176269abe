package config

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
)

// Bound records the addresses the server actually bound, written into
// runtime/current_config.toml next to the configuration.
type Bound struct {
	TCP       string `toml:"tcp,omitempty"`
	HTTP      string `toml:"http,omitempty"`
	QUIC      string `toml:"quic,omitempty"`
	WebSocket string `toml:"websocket,omitempty"`
}

// currentDocument is what runtime/current_config.toml holds.
type currentDocument struct {
	Config
	Bound Bound `toml:"bound"`
}

// EncodeCurrent renders the configuration the server booted with and the
// addresses it bound, as TOML. Secrets are left out: every secret key is
// a Secret, which encodes as "" or "(set)", never its value (root
// credentials come from the environment and are never part of Config).
func EncodeCurrent(cfg *Config, bound Bound) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# Written by strata-server at boot: the configuration in effect and the\n# addresses bound. Edits here are not read back.\n")
	if err := toml.NewEncoder(&buf).Encode(currentDocument{Config: *cfg, Bound: bound}); err != nil {
		return nil, fmt.Errorf("encode current config: %w", err)
	}
	return buf.Bytes(), nil
}
