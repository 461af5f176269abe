package connectors

import (
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/stratabroker/strata/net/units"
)

// envPrefix starts every runtime-config environment override:
// STRATA_CONNECTORS_ + the dotted TOML path in upper case with "_"
// (STRATA_CONNECTORS_HTTP_ADDRESS, STRATA_CONNECTORS_STRATA_PASSWORD).
const envPrefix = "STRATA_CONNECTORS_"

// RuntimeConfig is strata-connect's own configuration.
type RuntimeConfig struct {
	HTTP       HTTPConfig       `toml:"http" json:"http"`
	Strata     StrataConfig     `toml:"strata" json:"strata"`
	State      StateConfig      `toml:"state" json:"state"`
	Connectors ProviderConfig   `toml:"connectors" json:"connectors"`
	Logging    LoggingConfig    `toml:"logging" json:"logging"`
	Shutdown   ShutdownConfig   `toml:"shutdown" json:"shutdown"`
	Plugins    PluginsRunConfig `toml:"plugins" json:"plugins"`
}

// HTTPConfig is the control API listener.
type HTTPConfig struct {
	Enabled bool   `toml:"enabled" json:"enabled"`
	Address string `toml:"address" json:"address"`
}

// StrataConfig says how to reach the broker.
type StrataConfig struct {
	Address  string `toml:"address" json:"address"`
	Username string `toml:"username" json:"username"`
	Password string `toml:"password" json:"-"`
	Token    string `toml:"token" json:"-"`
}

// StateConfig is where source state files live.
type StateConfig struct {
	Path string `toml:"path" json:"path"`
}

// ProviderConfig says where connector configs come from: a directory
// (config_type "local") or an HTTP endpoint ("http").
type ProviderConfig struct {
	ConfigType string `toml:"config_type" json:"config_type"`
	ConfigDir  string `toml:"config_dir" json:"config_dir"`
	URL        string `toml:"url" json:"url"`
	// PollInterval is how often configs are re-read to pick up a new
	// version ("0s" disables).
	PollInterval Duration `toml:"poll_interval" json:"poll_interval"`
}

// LoggingConfig selects the log level and format (text or json).
type LoggingConfig struct {
	Level  string `toml:"level" json:"level"`
	Format string `toml:"format" json:"format"`
}

// ShutdownConfig bounds how long a stopping connector may take.
type ShutdownConfig struct {
	Timeout Duration `toml:"timeout" json:"timeout"`
}

// PluginsRunConfig bounds external plugin calls: a plugin that does not
// answer in time is killed and its connector fails.
type PluginsRunConfig struct {
	CallTimeout Duration `toml:"call_timeout" json:"call_timeout"`
}

// Duration is a time.Duration read from TOML or the environment as "5s",
// "100 ms", "1h 30m" by net/units, the parser of the server's config,
// the CLI and the HTTP API.
type Duration struct{ time.Duration }

// UnmarshalText parses a duration with units.ParseDuration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := units.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = time.Duration(v)
	return nil
}

// MarshalText formats the duration so that it reads back exactly.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(units.FormatDuration(units.Duration(d.Duration))), nil
}

// DefaultRuntimeConfig is the configuration with no file and no overrides.
func DefaultRuntimeConfig() RuntimeConfig {
	return RuntimeConfig{
		HTTP:       HTTPConfig{Enabled: true, Address: "127.0.0.1:8081"},
		Strata:     StrataConfig{Address: "127.0.0.1:8090", Username: "iggy", Password: "iggy"},
		State:      StateConfig{Path: "local_state/connectors"},
		Connectors: ProviderConfig{ConfigType: "local", ConfigDir: "connectors", PollInterval: Duration{5 * time.Second}},
		Logging:    LoggingConfig{Level: "info", Format: "text"},
		Shutdown:   ShutdownConfig{Timeout: Duration{10 * time.Second}},
		Plugins:    PluginsRunConfig{CallTimeout: Duration{30 * time.Second}},
	}
}

// LoadRuntimeConfig reads path (none when empty) over the defaults, then
// applies STRATA_CONNECTORS_* overrides from environ (KEY=VALUE entries),
// then validates. Errors wrap ErrConfig and name the file or variable.
func LoadRuntimeConfig(path string, environ []string) (RuntimeConfig, error) {
	cfg := DefaultRuntimeConfig()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		md, err := toml.Decode(string(b), &cfg)
		if err != nil {
			return cfg, fmt.Errorf("%w: %s: %w", ErrConfig, path, err)
		}
		if un := md.Undecoded(); len(un) > 0 {
			return cfg, fmt.Errorf("%w: %s: unknown key %s", ErrConfig, path, un[0])
		}
	}
	if err := applyEnv(reflect.ValueOf(&cfg).Elem(), envPrefix, environ); err != nil {
		return cfg, err
	}
	return cfg, cfg.validate()
}

func (c *RuntimeConfig) validate() error {
	if c.Strata.Address == "" {
		return fmt.Errorf("%w: strata.address is empty", ErrConfig)
	}
	if c.State.Path == "" {
		return fmt.Errorf("%w: state.path is empty", ErrConfig)
	}
	switch c.Connectors.ConfigType {
	case "local":
		if c.Connectors.ConfigDir == "" {
			return fmt.Errorf("%w: connectors.config_dir is empty", ErrConfig)
		}
	case "http":
		if c.Connectors.URL == "" {
			return fmt.Errorf("%w: connectors.url is empty for config_type http", ErrConfig)
		}
	default:
		return fmt.Errorf("%w: connectors.config_type %q (want local or http)", ErrConfig, c.Connectors.ConfigType)
	}
	switch c.Logging.Format {
	case "text", "json":
	default:
		return fmt.Errorf("%w: logging.format %q (want text or json)", ErrConfig, c.Logging.Format)
	}
	if c.Shutdown.Timeout.Duration <= 0 || c.Plugins.CallTimeout.Duration <= 0 {
		return fmt.Errorf("%w: shutdown.timeout and plugins.call_timeout must be positive", ErrConfig)
	}
	return nil
}

// applyEnv sets every leaf field of v whose variable prefix+PATH is in
// environ. Configuration is read once at start-up, so reflection is fine.
func applyEnv(v reflect.Value, prefix string, environ []string) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("toml")
		if name == "" {
			continue
		}
		key := prefix + strings.ToUpper(name)
		fv := v.Field(i)
		if fv.Kind() == reflect.Struct && f.Type != reflect.TypeOf(Duration{}) {
			if err := applyEnv(fv, key+"_", environ); err != nil {
				return err
			}
			continue
		}
		raw, ok := lookupEnv(environ, key)
		if !ok {
			continue
		}
		if err := setField(fv, raw); err != nil {
			return fmt.Errorf("%w: %s=%q: %w", ErrConfig, key, raw, err)
		}
	}
	return nil
}

func lookupEnv(environ []string, key string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func setField(fv reflect.Value, raw string) error {
	if d, ok := fv.Addr().Interface().(*Duration); ok {
		return d.UnmarshalText([]byte(raw))
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(raw)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		fv.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return err
		}
		fv.SetInt(n)
	case reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return err
		}
		fv.SetUint(n)
	default:
		return fmt.Errorf("cannot set a %s from the environment", fv.Kind())
	}
	return nil
}
