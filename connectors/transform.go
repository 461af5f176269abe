package connectors

import (
	"fmt"
)

// TransformsConfig is a connector's [transforms] table. The chain runs in
// a fixed order: filter (drop whole messages), filter_fields, delete_fields,
// add_fields, update_fields. Transforms apply to json payloads that are
// objects; other payloads pass unchanged.
type TransformsConfig struct {
	Filter       *FilterConfig       `toml:"filter" json:"filter,omitempty"`
	FilterFields *FilterFieldsConfig `toml:"filter_fields" json:"filter_fields,omitempty"`
	DeleteFields *DeleteFieldsConfig `toml:"delete_fields" json:"delete_fields,omitempty"`
	AddFields    *FieldsConfig       `toml:"add_fields" json:"add_fields,omitempty"`
	UpdateFields *UpdateFieldsConfig `toml:"update_fields" json:"update_fields,omitempty"`
}

// FilterConfig drops messages: with Exists, those lacking Field; with
// Equals, those whose Field differs from Equals (compared as text).
type FilterConfig struct {
	Field  string `toml:"field" json:"field"`
	Equals any    `toml:"equals" json:"equals,omitempty"`
	Exists bool   `toml:"exists" json:"exists,omitempty"`
}

// FilterFieldsConfig keeps only Keep fields (when set) and removes Drop.
type FilterFieldsConfig struct {
	Keep []string `toml:"keep" json:"keep,omitempty"`
	Drop []string `toml:"drop" json:"drop,omitempty"`
}

// DeleteFieldsConfig removes fields.
type DeleteFieldsConfig struct {
	Fields []string `toml:"fields" json:"fields"`
}

// FieldValue is one key and value to set.
type FieldValue struct {
	Key   string `toml:"key" json:"key"`
	Value any    `toml:"value" json:"value"`
}

// FieldsConfig lists fields to add (overwriting existing ones).
type FieldsConfig struct {
	Fields []FieldValue `toml:"fields" json:"fields"`
}

// UpdateFieldsConfig sets fields that already exist (when Condition is
// "key_exists", the default), are missing ("key_not_exists"), or always
// ("always").
type UpdateFieldsConfig struct {
	Fields    []FieldValue `toml:"fields" json:"fields"`
	Condition string       `toml:"condition" json:"condition,omitempty"`
}

// validate checks what can be checked before running.
func (t *TransformsConfig) validate() error {
	if t == nil {
		return nil
	}
	if t.Filter != nil && t.Filter.Field == "" {
		return fmt.Errorf("%w: transforms.filter needs field", ErrConfig)
	}
	if t.UpdateFields != nil {
		switch t.UpdateFields.Condition {
		case "", "key_exists", "key_not_exists", "always":
		default:
			return fmt.Errorf("%w: transforms.update_fields condition %q", ErrConfig, t.UpdateFields.Condition)
		}
	}
	return nil
}

// empty reports whether no transform is configured.
func (t *TransformsConfig) empty() bool {
	return t == nil || (t.Filter == nil && t.FilterFields == nil && t.DeleteFields == nil && t.AddFields == nil && t.UpdateFields == nil)
}

// apply runs the chain on obj in place; keep is false when the filter
// dropped the message.
func (t *TransformsConfig) apply(obj map[string]any) (keep bool) {
	if t == nil || obj == nil {
		return true
	}
	if f := t.Filter; f != nil {
		v, ok := obj[f.Field]
		if f.Exists && !ok {
			return false
		}
		if f.Equals != nil && (!ok || fmt.Sprint(v) != fmt.Sprint(f.Equals)) {
			return false
		}
	}
	if ff := t.FilterFields; ff != nil {
		if len(ff.Keep) > 0 {
			keepSet := make(map[string]bool, len(ff.Keep))
			for _, k := range ff.Keep {
				keepSet[k] = true
			}
			for k := range obj {
				if !keepSet[k] {
					delete(obj, k)
				}
			}
		}
		for _, k := range ff.Drop {
			delete(obj, k)
		}
	}
	if d := t.DeleteFields; d != nil {
		for _, k := range d.Fields {
			delete(obj, k)
		}
	}
	if a := t.AddFields; a != nil {
		for _, f := range a.Fields {
			obj[f.Key] = f.Value
		}
	}
	if u := t.UpdateFields; u != nil {
		for _, f := range u.Fields {
			_, exists := obj[f.Key]
			switch u.Condition {
			case "always":
			case "key_not_exists":
				if exists {
					continue
				}
			default:
				if !exists {
					continue
				}
			}
			obj[f.Key] = f.Value
		}
	}
	return true
}

// transformPayload decodes payload by schema, runs the chain and
// re-encodes. keep is false when the message was filtered out; err is a
// decode failure (the message is counted and skipped by the caller).
func transformPayload(s Schema, t *TransformsConfig, payload []byte) (out []byte, keep bool, err error) {
	obj, err := decodePayload(s, payload)
	if err != nil {
		return nil, false, err
	}
	if t.empty() || obj == nil {
		return payload, true, nil
	}
	if !t.apply(obj) {
		return nil, false, nil
	}
	out, err = encodeObject(obj)
	return out, err == nil, err
}
