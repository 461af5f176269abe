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
// order.
func keys(cfg *Config) []envKey {
	var out []envKey
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			name := t.Field(i).Tag.Get("toml")
			if t.Field(i).Anonymous && name == "" {
				// An embedded struct's keys belong to the enclosing table.
				walk(prefix, v.Field(i))
				continue
			}
			if name == "" {
				continue
			}
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			f := v.Field(i)
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

// EnvName returns the environment variable that overrides the dotted key.
func EnvName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// applyEnv sets every key named by a STRATA_ variable of environ. A
// STRATA_ variable that names no key is ignored unless it looks like a
// config key of a known section, so that typos in overrides are reported.
func applyEnv(cfg *Config, environ []string) error {
	byName := map[string]envKey{}
	for _, k := range keys(cfg) {
		byName[EnvName(k.path)] = k
	}
	values := map[string]string{}
	var names []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		if _, known := byName[name]; !known {
			continue
		}
		values[name] = value
		names = append(names, name)
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
