package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/stratabroker/strata/connectors"
	"github.com/stratabroker/strata/connectors/plugin"
)

func init() {
	connectors.RegisterSink("file", func() plugin.Sink { return &fileSink{} })
	connectors.RegisterSource("file", func() plugin.Source { return &fileSource{} })
}

// Limits of the file connectors.
const (
	fileLineMax        = 1 << 20
	fileBatchDefault   = 100
	fileBatchMax       = 100_000
	fileSinkPermission = 0o644
)

type fileConfig struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// LinesPerBatch is the most lines one source poll returns.
	LinesPerBatch int `json:"lines_per_batch"`
}

// fileSink appends messages to a file, one line each (jsonl: a JSON
// object with the message's coordinates and payload; raw: the payload),
// and fsyncs before accepting the batch.
type fileSink struct {
	f      *os.File
	format string
	buf    []byte
}

func (s *fileSink) Open(_ context.Context, req plugin.OpenRequest) error {
	var c fileConfig
	if err := decodeConfig(req.Config, &c); err != nil {
		return err
	}
	if c.Path == "" {
		return fmt.Errorf("%w: path is empty", ErrConfig)
	}
	var err error
	if s.format, err = parseFormat(c.Format); err != nil {
		return err
	}
	s.f, err = os.OpenFile(c.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, fileSinkPermission)
	return err
}

func (s *fileSink) Consume(_ context.Context, b plugin.SinkBatch) error {
	s.buf = s.buf[:0]
	for i := range b.Messages {
		var err error
		if s.buf, err = appendLine(s.buf, s.format, &b, &b.Messages[i]); err != nil {
			return err
		}
	}
	if _, err := s.f.Write(s.buf); err != nil {
		return err
	}
	return s.f.Sync()
}

func (s *fileSink) Close(context.Context) error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}

// fileState is the file source's position.
type fileState struct {
	Offset int64 `json:"offset"`
}

// fileSource follows a file line by line (complete lines only): jsonl
// lines become JSON payloads, raw lines raw payloads. Its state is the
// byte offset after the last line handed out.
type fileSource struct {
	cfg    fileConfig
	f      *os.File
	r      *bufio.Reader
	offset int64
}

func (s *fileSource) Open(_ context.Context, req plugin.OpenRequest) error {
	if err := decodeConfig(req.Config, &s.cfg); err != nil {
		return err
	}
	if s.cfg.Path == "" {
		return fmt.Errorf("%w: path is empty", ErrConfig)
	}
	if _, err := parseFormat(s.cfg.Format); err != nil {
		return err
	}
	if s.cfg.LinesPerBatch == 0 {
		s.cfg.LinesPerBatch = fileBatchDefault
	}
	if s.cfg.LinesPerBatch < 0 || s.cfg.LinesPerBatch > fileBatchMax {
		return fmt.Errorf("%w: lines_per_batch %d", ErrConfig, s.cfg.LinesPerBatch)
	}
	if len(req.State) > 0 {
		var st fileState
		if err := json.Unmarshal(req.State, &st); err != nil {
			return fmt.Errorf("file source: state: %w", err)
		}
		s.offset = st.Offset
	}
	f, err := os.Open(s.cfg.Path)
	if err != nil {
		return err
	}
	if _, err := f.Seek(s.offset, io.SeekStart); err != nil {
		_ = f.Close()
		return err
	}
	s.f, s.r = f, bufio.NewReaderSize(f, fileLineMax)
	return nil
}

func (s *fileSource) Poll(ctx context.Context) (plugin.ProducedBatch, error) {
	var out plugin.ProducedBatch
	for len(out.Messages) < s.cfg.LinesPerBatch {
		line, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return out, fmt.Errorf("file source: line at offset %d longer than the buffer", s.offset)
		}
		if err != nil {
			// Incomplete line: rewind to its start and wait for more.
			if _, serr := s.f.Seek(s.offset, io.SeekStart); serr != nil {
				return out, serr
			}
			s.r.Reset(s.f)
			if errors.Is(err, io.EOF) {
				break
			}
			return out, err
		}
		s.offset += int64(len(line))
		body := line[:len(line)-1]
		if len(body) == 0 {
			continue
		}
		out.Messages = append(out.Messages, plugin.ProducedMessage{Payload: append([]byte(nil), body...)})
	}
	if len(out.Messages) > 0 {
		st, err := json.Marshal(fileState{Offset: s.offset})
		if err != nil {
			return out, err
		}
		out.State = st
	}
	return out, ctx.Err()
}

func (s *fileSource) Report(context.Context, plugin.BatchResult) error { return nil }

func (s *fileSource) Close(context.Context) error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}
