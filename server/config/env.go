package config

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// EnvPrefix starts the name of every environment override.
const EnvPrefix = "STRATA_"

// envKey is one overridable key: its dotted TOML path and its field.
type envKey struct {
	path  string
	field reflect.Value
}

// keys lists every leaf key of cfg with its dotted path, in declaration
// order. An embedded struct without a tag (HTTP's Listener) contributes
// its fields to its parent's table, as the TOML decoder reads them.
func keys(cfg *Config) []envKey {
	var out []envKey
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := v.Field(i)
			name := t.Field(i).Tag.Get("toml")
			if t.Field(i).Anonymous && name == "" {
				// An embedded struct's keys belong to the enclosing table.
				walk(prefix, v.Field(i))
				continue
			}
			if name == "" {
				if t.Field(i).Anonymous && f.Kind() == reflect.Struct {
					walk(prefix, f)
				}
				continue
			}
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			if f.Kind() == reflect.Struct {
				walk(path, f)
				continue
			}
			out = append(out, envKey{path: path, field: f})
		}
	}
	walk("", reflect.ValueOf(cfg).Elem())
	return out
}

// keyPaths lists the dotted path of every key.
func keyPaths() []string {
	var cfg Config
	var out []string
	for _, k := range keys(&cfg) {
		out = append(out, k.path)
	}
	return out
}

// EnvNames lists the environment variable of every key, in declaration
// order.
func EnvNames() []string {
	var out []string
	for _, p := range keyPaths() {
		out = append(out, EnvName(p))
	}
	return out
}

// EnvName returns the environment variable that overrides the dotted key.
func EnvName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// OtherVariables are the STRATA_ variables that are not keys of this
// configuration, and who reads them. strata-server starts with any of
// them set; any other STRATA_ variable that names no key stops it (a
// misspelt override must not pass for a default). A program of this
// repository that reads a new STRATA_ variable adds it here (a test in
// the repository root checks every STRATA_ name in the sources and the
// READMEs against the keys and this list).
var OtherVariables = map[string]string{
	"STRATA_ROOT_USERNAME":     "strata-server: the root user created at the first boot",
	"STRATA_ROOT_PASSWORD":     "strata-server: the root user's password at the first boot",
	"STRATA_ADDRESS":           "strata (CLI): the server address",
	"STRATA_USERNAME":          "strata (CLI): the user to log in as",
	"STRATA_PASSWORD":          "strata (CLI): the password to log in with",
	"STRATA_TOKEN":             "strata (CLI): a personal access token to log in with",
	"STRATA_TRANSPORT":         "strata (CLI): tcp, tls, quic, ws or wss",
	"STRATA_TLS_CA":            "strata (CLI): a CA certificate file to trust",
	"STRATA_TLS_INSECURE":      "strata (CLI): skip verifying the server's certificate",
	"STRATA_CONNECT_TIMEOUT":   "strata (CLI): give up connecting after this long",
	"STRATA_CONTEXT":           "strata (CLI): the saved context to use",
	"STRATA_CONFIG_DIR":        "strata (CLI): the directory of the saved contexts",
	"STRATA_REPORT_SCREENSHOT": "strata-bench's report test: where to keep the headless browser's screenshot",
}

// OtherPrefixes start the names of STRATA_ variables that belong to other
// programs, which check them themselves.
var OtherPrefixes = map[string]string{
	"STRATA_CONNECTORS_": "strata-connect's settings (connectors/README.md), checked by strata-connect",
	"STRATA_TEST_":       "the test suites' own settings (STRATA_TEST_POSTGRES_DSN, ...)",
}

// RenamedVariables are variables that were read outside the config and
// are keys now: the error says which.
var RenamedVariables = map[string]string{
	"STRATA_HTTP_JWT_SECRET":        "http.jwt.encoding_secret",
	"STRATA_SHARD_RUNTIME_CAPACITY": "system.io.ring_entries",
	"STRATA_SHARD_EVENT_INTERVAL":   "system.io.ring_event_interval",
}

// IsOtherVariable reports whether name is a STRATA_ variable of another
// program (OtherVariables, OtherPrefixes).
func IsOtherVariable(name string) bool {
	if _, ok := OtherVariables[name]; ok {
		return true
	}
	for prefix := range OtherPrefixes {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// applyEnv sets every key named by a STRATA_ variable of environ. A
// STRATA_ variable that names no key and is not another program's
// (IsOtherVariable) is an error naming the nearest key.
func applyEnv(cfg *Config, environ []string) error {
	byName := map[string]envKey{}
	var candidates []string
	for _, k := range keys(cfg) {
		byName[EnvName(k.path)] = k
		candidates = append(candidates, EnvName(k.path))
	}
	values := map[string]string{}
	var names []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		if _, known := byName[name]; !known {
			if IsOtherVariable(name) {
				continue
			}
			if path, renamed := RenamedVariables[name]; renamed {
				return fmt.Errorf("%w: %s is now the config key %s: set %s instead", ErrInvalid, name, path, EnvName(path))
			}
			near := NearestName(name, candidates)
			return fmt.Errorf("%w: %s names no config key; did you mean %s (%s)? (strata-server --print-default-config lists every key)",
				ErrInvalid, name, near, byName[near].path)
		}
		if _, seen := values[name]; !seen {
			names = append(names, name)
		}
		values[name] = value
	}
	sort.Strings(names)
	for _, name := range names {
		k := byName[name]
		if err := setField(k.field, values[name]); err != nil {
			return fmt.Errorf("%w: %s (from %s): %v", ErrInvalid, k.path, name, err)
		}
	}
	return nil
}

// NearestName returns the candidate closest to name by edit distance (the
// first of equals), for "did you mean" in errors (strata-connect uses it
// for its STRATA_CONNECTORS_ variables).
func NearestName(name string, candidates []string) string {
	best, bestDistance := "", -1
	for _, c := range candidates {
		if d := editDistance(name, c); bestDistance < 0 || d < bestDistance {
			best, bestDistance = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diagonal := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			above := row[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			row[j] = min(row[j]+1, row[j-1]+1, diagonal+cost)
			diagonal = above
		}
	}
	return row[len(b)]
}

// setField parses text into a leaf field of the config.
func setField(f reflect.Value, text string) error {
	if u, ok := f.Addr().Interface().(encoding.TextUnmarshaler); ok {
		return u.UnmarshalText([]byte(text))
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(text)
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not a boolean", text)
		}
		f.SetBool(b)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(strings.TrimSpace(text), 10, f.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an unsigned integer of %d bits", text, f.Type().Bits())
		}
		f.SetUint(n)
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, f.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an integer", text)
		}
		f.SetInt(n)
	default:
		return fmt.Errorf("cannot override a %s from the environment", f.Kind())
	}
	return nil
}
