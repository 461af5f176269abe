package server

import (
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stratabroker/strata/server/config"
)

// LogFileName is the server log's name under the logs directory.
const LogFileName = "strata-server.log"

// NewLogger builds the server's zap logger from [system.logging]: text
// (console) or JSON lines, written both to stderr and to
// {system.path}/{logging.path}/strata-server.log. The returned close
// function syncs and closes the file.
func NewLogger(cfg *config.Config) (*zap.Logger, func(), error) {
	level, err := zapcore.ParseLevel(cfg.System.Logging.Level)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: system.logging.level: %v", config.ErrInvalid, err)
	}
	dir := cfg.System.Logging.Path
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cfg.System.Path, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create log directory: %w", err)
	}
	file, err := os.OpenFile(filepath.Join(dir, LogFileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open log file: %w", err)
	}
	encoderConfig := zap.NewProductionEncoderConfig()
	encoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	if cfg.System.Logging.Format == "json" {
		encoder = zapcore.NewJSONEncoder(encoderConfig)
	} else {
		encoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder
		encoder = zapcore.NewConsoleEncoder(encoderConfig)
	}
	core := zapcore.NewTee(
		zapcore.NewCore(encoder, zapcore.Lock(os.Stderr), level),
		zapcore.NewCore(encoder, zapcore.AddSync(file), level),
	)
	logger := zap.New(core)
	closeFn := func() {
		_ = logger.Sync()
		_ = file.Close()
	}
	return logger, closeFn, nil
}
