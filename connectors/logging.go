package connectors

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stratabroker/strata/server/logging"
)

// NewLogger builds the runtime's zap logger: text (console) or JSON lines
// at the configured level, written to w, in the format every Strata
// program logs in (server/logging), so strata-connect's log reads like
// strata-server's.
func NewLogger(c LoggingConfig, w io.Writer) (*zap.Logger, error) {
	level, err := logging.ParseLevel(c.Level)
	if err != nil {
		return nil, fmt.Errorf("%w: logging.level: %w", ErrConfig, err)
	}
	encoder, err := logging.NewEncoder(c.Format)
	if err != nil {
		return nil, fmt.Errorf("%w: logging.format: %w", ErrConfig, err)
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.AddSync(w), level)), nil
}
