// Package logging is the log format every Strata program shares, so that
// the logs of strata-server and strata-connect read alike and one set of
// tools (grep, jq, a log shipper) handles both:
//
//   - keys: ts (ISO 8601 time), level, msg, logger, caller, stacktrace;
//   - levels spelled debug, info, warn, error, as in the configs
//     ([system.logging] level, [logging] level) and as the CLI writes its
//     "error: ..." line;
//   - "text" is zap's console layout (tab-separated ts, level, msg, then
//     the fields as JSON), "json" one JSON object per line;
//   - field keys are snake_case and name the same thing everywhere:
//     stream_id, topic_id, partition_id, group_id, user_id,
//     connection_id, session_id are numbers (Iggy's JSON names); stream,
//     topic, group are names; dir and file are paths; error is the error;
//     connector_key and connector_type name a connector (as the metrics'
//     labels do). A test in the repository root checks every key in the
//     sources against these rules.
package logging

import (
	"fmt"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Formats, as written in the configs.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Levels lists the level names the configs accept.
var Levels = []string{"debug", "info", "warn", "error"}

// EncoderConfig is the encoder configuration of every Strata log.
func EncoderConfig() zapcore.EncoderConfig {
	c := zap.NewProductionEncoderConfig()
	c.TimeKey = "ts"
	c.LevelKey = "level"
	c.MessageKey = "msg"
	c.EncodeTime = zapcore.ISO8601TimeEncoder
	c.EncodeLevel = zapcore.LowercaseLevelEncoder
	c.EncodeDuration = zapcore.SecondsDurationEncoder
	return c
}

// NewEncoder returns the encoder of format (FormatText, FormatJSON; empty
// is text).
func NewEncoder(format string) (zapcore.Encoder, error) {
	switch format {
	case FormatText, "":
		return zapcore.NewConsoleEncoder(EncoderConfig()), nil
	case FormatJSON:
		return zapcore.NewJSONEncoder(EncoderConfig()), nil
	}
	return nil, fmt.Errorf("log format %q is not one of %s, %s", format, FormatText, FormatJSON)
}

// ParseLevel reads one of Levels.
func ParseLevel(s string) (zapcore.Level, error) {
	for _, name := range Levels {
		if s == name {
			return zapcore.ParseLevel(s)
		}
	}
	return zapcore.InfoLevel, fmt.Errorf("log level %q is not one of %s", s, strings.Join(Levels, ", "))
}
