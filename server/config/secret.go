package config

// Secret is a config value that must not leave the process: it encodes
// (TOML, JSON, any encoding.TextMarshaler user) as "" when empty and as
// SecretSet otherwise, and formats the same way with %v and %s, so that
// runtime/current_config.toml, the diagnostics snapshot and the log never
// hold it. Read it with string(s) where it is used.
type Secret string

// SecretSet stands for a secret that is set.
const SecretSet = "(set)"

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return SecretSet
}

// GoString hides the value from %#v.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// MarshalText hides the value from every encoder.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the value (TOML strings, environment overrides).
func (s *Secret) UnmarshalText(text []byte) error {
	*s = Secret(text)
	return nil
}
