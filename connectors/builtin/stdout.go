package builtin

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/stratabroker/strata/connectors"
	"github.com/stratabroker/strata/connectors/plugin"
)

func init() {
	connectors.RegisterSink("stdout", func() plugin.Sink { return &stdoutSink{out: os.Stdout} })
}

// stdoutSink prints every message as a line (plugin_config format =
// "jsonl" (default) or "raw").
type stdoutSink struct {
	out    io.Writer
	format string
	buf    []byte
}

type stdoutConfig struct {
	Format string `json:"format"`
}

func (s *stdoutSink) Open(_ context.Context, req plugin.OpenRequest) error {
	var c stdoutConfig
	if err := decodeConfig(req.Config, &c); err != nil {
		return err
	}
	f, err := parseFormat(c.Format)
	s.format = f
	return err
}

func parseFormat(f string) (string, error) {
	switch f {
	case "", formatJSONL:
		return formatJSONL, nil
	case formatRaw:
		return formatRaw, nil
	}
	return "", fmt.Errorf("%w: format %q (want jsonl or raw)", ErrConfig, f)
}

func (s *stdoutSink) Consume(_ context.Context, b plugin.SinkBatch) error {
	s.buf = s.buf[:0]
	for i := range b.Messages {
		var err error
		if s.buf, err = appendLine(s.buf, s.format, &b, &b.Messages[i]); err != nil {
			return err
		}
	}
	_, err := s.out.Write(s.buf)
	return err
}

func (s *stdoutSink) Close(context.Context) error { return nil }
