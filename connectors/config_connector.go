package connectors

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Connector kinds.
const (
	KindSource = "source"
	KindSink   = "sink"
)

// Limits and defaults of connector configs.
const (
	batchLengthDefault  = 1000
	batchLengthMax      = 100_000
	pollIntervalDefault = 5 * time.Millisecond
	// consumerGroupPrefix names a sink's default consumer group.
	consumerGroupPrefix = "strata-connect-sink-"
)

// Delivery guarantees of a sink.
const (
	DeliveryAtLeastOnce = "at_least_once"
	DeliveryAtMostOnce  = "at_most_once"
)

// ConnectorConfig is one connector's configuration file,
// {key}_{source|sink}[_v{N}].toml.
type ConnectorConfig struct {
	// Key and Kind come from the file name (or the HTTP provider).
	Key  string `toml:"key" json:"key"`
	Kind string `toml:"type" json:"type"`
	// Version orders configs of one key; the highest wins.
	Version uint64 `toml:"version" json:"version"`
	Enabled *bool  `toml:"enabled" json:"enabled,omitempty"`
	Name    string `toml:"name" json:"name"`
	// Plugin names a built-in connector; Path an external executable.
	// Exactly one is set.
	Plugin  string   `toml:"plugin" json:"plugin,omitempty"`
	Path    string   `toml:"path" json:"path,omitempty"`
	Args    []string `toml:"args" json:"args,omitempty"`
	Verbose bool     `toml:"verbose" json:"verbose"`
	// Streams: for a source, where to send (one entry); for a sink, what
	// to consume.
	Streams      []StreamConfig    `toml:"streams" json:"streams"`
	Transforms   *TransformsConfig `toml:"transforms" json:"transforms,omitempty"`
	PluginConfig map[string]any    `toml:"plugin_config" json:"plugin_config,omitempty"`
}

// StreamConfig is one [[streams]] entry.
type StreamConfig struct {
	Stream string `toml:"stream" json:"stream"`
	// Topic is a source's target topic.
	Topic string `toml:"topic" json:"topic,omitempty"`
	// Topics are a sink's topics, one consuming task each.
	Topics []string `toml:"topics" json:"topics,omitempty"`
	Schema string   `toml:"schema" json:"schema"`
	// BatchLength is the most messages per send (source) or per plugin
	// call (sink); default 1000.
	BatchLength int `toml:"batch_length" json:"batch_length"`
	// PollInterval is a sink's pause after a round that found nothing.
	PollInterval Duration `toml:"poll_interval" json:"poll_interval"`
	// ConsumerGroup overrides strata-connect-sink-{key}.
	ConsumerGroup string `toml:"consumer_group" json:"consumer_group,omitempty"`
	// Delivery is at_least_once (default) or at_most_once.
	Delivery string `toml:"delivery" json:"delivery,omitempty"`
	// PartitionID, when set, sends every source batch to one partition;
	// otherwise the server balances batches across partitions.
	PartitionID *uint32 `toml:"partition_id" json:"partition_id,omitempty"`
}

// ParseConnectorConfig decodes TOML text and validates it for key and
// kind (which override the file's own).
func ParseConnectorConfig(text, key, kind string) (*ConnectorConfig, error) {
	var c ConnectorConfig
	md, err := toml.Decode(text, &c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "plugin_config" {
			continue
		}
		return nil, fmt.Errorf("%w: unknown key %s", ErrConfig, k)
	}
	if key != "" {
		c.Key = key
	}
	if kind != "" {
		c.Kind = kind
	}
	return &c, c.normalize()
}

// normalize fills defaults and validates.
func (c *ConnectorConfig) normalize() error {
	if c.Key == "" {
		return fmt.Errorf("%w: connector key is empty", ErrConfig)
	}
	if c.Kind != KindSource && c.Kind != KindSink {
		return fmt.Errorf("%w: connector %s: type %q (want source or sink)", ErrConfig, c.Key, c.Kind)
	}
	if (c.Plugin == "") == (c.Path == "") {
		return fmt.Errorf("%w: connector %s: set exactly one of plugin (built-in) or path (executable)", ErrConfig, c.Key)
	}
	if len(c.Streams) == 0 {
		return fmt.Errorf("%w: connector %s: no [[streams]]", ErrConfig, c.Key)
	}
	if c.Kind == KindSource && len(c.Streams) != 1 {
		return fmt.Errorf("%w: source %s: exactly one [[streams]] entry", ErrConfig, c.Key)
	}
	for i := range c.Streams {
		s := &c.Streams[i]
		if s.Stream == "" {
			return fmt.Errorf("%w: connector %s: streams[%d].stream is empty", ErrConfig, c.Key, i)
		}
		if c.Kind == KindSource && s.Topic == "" {
			return fmt.Errorf("%w: source %s: streams[%d].topic is empty", ErrConfig, c.Key, i)
		}
		if c.Kind == KindSink && len(s.Topics) == 0 {
			return fmt.Errorf("%w: sink %s: streams[%d].topics is empty", ErrConfig, c.Key, i)
		}
		if _, err := parseSchema(s.Schema); err != nil {
			return fmt.Errorf("connector %s: %w", c.Key, err)
		}
		if s.BatchLength == 0 {
			s.BatchLength = batchLengthDefault
		}
		if s.BatchLength < 0 || s.BatchLength > batchLengthMax {
			return fmt.Errorf("%w: connector %s: batch_length %d outside 1..%d", ErrConfig, c.Key, s.BatchLength, batchLengthMax)
		}
		if s.PollInterval.Duration <= 0 {
			s.PollInterval.Duration = pollIntervalDefault
		}
		if s.ConsumerGroup == "" {
			s.ConsumerGroup = consumerGroupPrefix + c.Key
		}
		switch s.Delivery {
		case "":
			s.Delivery = DeliveryAtLeastOnce
		case DeliveryAtLeastOnce, DeliveryAtMostOnce:
		default:
			return fmt.Errorf("%w: connector %s: delivery %q", ErrConfig, c.Key, s.Delivery)
		}
	}
	return c.Transforms.validate()
}

// enabled reports whether the connector should run (default true).
func (c *ConnectorConfig) enabled() bool { return c.Enabled == nil || *c.Enabled }

// pluginConfigJSON is the [plugin_config] table as JSON for Open.
func (c *ConnectorConfig) pluginConfigJSON() (json.RawMessage, error) {
	if c.PluginConfig == nil {
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(c.PluginConfig)
	if err != nil {
		return nil, fmt.Errorf("%w: connector %s: plugin_config: %w", ErrConfig, c.Key, err)
	}
	return b, nil
}

// secretKeyWords mark plugin_config keys whose values the API hides.
var secretKeyWords = []string{"password", "secret", "token", "connection_string", "dsn", "key"}

// redactedValue replaces a hidden value.
const redactedValue = "***"

// redacted returns a copy of c for the API with secret-looking
// plugin_config values (top level) replaced.
func (c *ConnectorConfig) redacted() *ConnectorConfig {
	out := *c
	if c.PluginConfig == nil {
		return &out
	}
	out.PluginConfig = make(map[string]any, len(c.PluginConfig))
	for k, v := range c.PluginConfig {
		lower := strings.ToLower(k)
		for _, w := range secretKeyWords {
			if strings.Contains(lower, w) {
				v = redactedValue
				break
			}
		}
		out.PluginConfig[k] = v
	}
	return &out
}

// applyEnv overrides the connector's config from the environment, so
// secrets and ports stay out of config files:
//
//	STRATA_CONNECTORS_{SOURCE|SINK}_{KEY}_ENABLED=false
//	STRATA_CONNECTORS_{SOURCE|SINK}_{KEY}_PLUGIN_CONFIG_{FIELD}=value
//
// KEY and FIELD in upper case. A field already in [plugin_config] keeps
// its type (integer, float, bool); a new one is a string named in lower
// case.
func (c *ConnectorConfig) applyEnv(environ []string) error {
	prefix := envPrefix + strings.ToUpper(c.Kind) + "_" + strings.ToUpper(c.Key) + "_"
	if v, ok := lookupEnv(environ, prefix+"ENABLED"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%w: %sENABLED=%q: %w", ErrConfig, prefix, v, err)
		}
		c.Enabled = &b
	}
	fieldPrefix := prefix + "PLUGIN_CONFIG_"
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, fieldPrefix) || len(name) == len(fieldPrefix) {
			continue
		}
		field := strings.ToLower(name[len(fieldPrefix):])
		if c.PluginConfig == nil {
			c.PluginConfig = map[string]any{}
		}
		for k := range c.PluginConfig {
			if strings.EqualFold(k, field) {
				field = k
			}
		}
		v, err := convertLike(c.PluginConfig[field], value)
		if err != nil {
			return fmt.Errorf("%w: %s=%q: %w", ErrConfig, name, value, err)
		}
		c.PluginConfig[field] = v
	}
	return nil
}

// convertLike parses s as the type of like (string when like is nil or a
// string).
func convertLike(like any, s string) (any, error) {
	switch like.(type) {
	case int64:
		return strconv.ParseInt(s, 10, 64)
	case float64:
		return strconv.ParseFloat(s, 64)
	case bool:
		return strconv.ParseBool(s)
	}
	return s, nil
}
