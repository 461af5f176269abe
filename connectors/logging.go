package connectors

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// NewLogger builds the runtime's zap logger: text (console) or JSON lines
// at the configured level, written to w.
func NewLogger(c LoggingConfig, w io.Writer) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(c.Level)
	if err != nil {
		return nil, fmt.Errorf("%w: logging.level: %w", ErrConfig, err)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	switch c.Format {
	case "json":
		encoder = zapcore.NewJSONEncoder(enc)
	case "text", "":
		encoder = zapcore.NewConsoleEncoder(enc)
	default:
		return nil, fmt.Errorf("%w: logging.format %q", ErrConfig, c.Format)
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.AddSync(w), level)), nil
}
