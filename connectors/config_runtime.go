package connectors

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/stratabroker/strata/net/units"
	"github.com/stratabroker/strata/server/config"
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
	if err := checkEnvNames(environ); err != nil {
		return cfg, err
	}
	if err := applyEnv(reflect.ValueOf(&cfg).Elem(), envPrefix, environ); err != nil {
		return cfg, err
	}
	return cfg, cfg.validate()
}

// EnvConfigPath names the runtime config file when --config is not given.
const EnvConfigPath = envPrefix + "CONFIG_PATH"

// RuntimeEnvNames lists the variable of every runtime setting, and
// EnvConfigPath.
func RuntimeEnvNames() []string {
	names := []string{EnvConfigPath}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := f.Tag.Get("toml")
			if name == "" {
				continue
			}
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(Duration{}) {
				walk(f.Type, prefix+strings.ToUpper(name)+"_")
				continue
			}
			names = append(names, prefix+strings.ToUpper(name))
		}
	}
	walk(reflect.TypeOf(RuntimeConfig{}), envPrefix)
	return names
}

// IsEnvName reports whether name is a variable strata-connect reads: a
// runtime setting (RuntimeEnvNames) or a per-connector override
// (STRATA_CONNECTORS_{SOURCE|SINK}_{KEY}_ENABLED or
// ..._{KEY}_PLUGIN_CONFIG_{FIELD}).
func IsEnvName(name string) bool {
	if slices.Contains(RuntimeEnvNames(), name) {
		return true
	}
	_, _, ok := connectorVariable(name)
	return ok
}

// connectorVariable splits a per-connector override into its kind and
// the rest ({KEY}_ENABLED or {KEY}_PLUGIN_CONFIG_{FIELD}); ok is false
// when name is not one.
func connectorVariable(name string) (kind, rest string, ok bool) {
	for _, k := range []string{KindSource, KindSink} {
		if r, found := strings.CutPrefix(name, envPrefix+strings.ToUpper(k)+"_"); found {
			kind, rest = k, r
		}
	}
	if kind == "" {
		return "", "", false
	}
	if key, found := strings.CutSuffix(rest, "_ENABLED"); found && key != "" {
		return kind, rest, true
	}
	if i := strings.Index(rest, "_PLUGIN_CONFIG_"); i > 0 && len(rest) > i+len("_PLUGIN_CONFIG_") {
		return kind, rest, true
	}
	return "", "", false
}

// checkEnvNames refuses a STRATA_CONNECTORS_ variable strata-connect does
// not read (a misspelt override must not pass for a default), naming the
// nearest one.
func checkEnvNames(environ []string) error {
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || IsEnvName(name) {
			continue
		}
		if strings.HasPrefix(name, envPrefix+"SOURCE_") || strings.HasPrefix(name, envPrefix+"SINK_") {
			return fmt.Errorf("%w: %s names no setting: a connector's variables are %sSOURCE_{KEY}_ENABLED, %sSINK_{KEY}_ENABLED and ..._{KEY}_PLUGIN_CONFIG_{FIELD}",
				ErrConfig, name, envPrefix, envPrefix)
		}
		return fmt.Errorf("%w: %s names no setting; did you mean %s?", ErrConfig, name, config.NearestName(name, RuntimeEnvNames()))
	}
	return nil
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

// unmatchedConnectorVariables lists the per-connector variables of
// environ whose key is no connector of entries (connectors may appear
// later, so the runtime warns about them rather than stopping).
func unmatchedConnectorVariables(environ []string, entries []ConfigEntry) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		kind, rest, ok := connectorVariable(name)
		if !ok {
			continue
		}
		matched := false
		for _, e := range entries {
			if e.Kind == kind && strings.HasPrefix(rest, strings.ToUpper(e.Key)+"_") {
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, name)
		}
	}
	return out
}
