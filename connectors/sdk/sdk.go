// Package sdk turns a plugin.Source or plugin.Sink into an external
// connector: an executable that speaks the framed protocol of
// connectors/PROTOCOL.md on its stdin and stdout. A plugin's main is one
// line:
//
//	func main() { sdk.Main(sdk.ServeSink("my_sink", &mySink{})) }
//
// Logs go to stderr; the runtime forwards them to its own log.
package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/stratabroker/strata/connectors/plugin"
)

// ErrProtocol reports a request the plugin cannot serve.
var ErrProtocol = errors.New("sdk: protocol violation by the runtime")

// Server serves one plugin over a reader and a writer.
type Server struct {
	name    string
	source  plugin.Source
	sink    plugin.Sink
	scratch []byte
}

// ServeSource returns a Server for a source.
func ServeSource(name string, s plugin.Source) *Server { return &Server{name: name, source: s} }

// ServeSink returns a Server for a sink.
func ServeSink(name string, s plugin.Sink) *Server { return &Server{name: name, sink: s} }

// Main serves s on stdin/stdout and exits the process: status 0 after a
// Close request or the runtime closing stdin, 1 on an error.
func Main(s *Server) {
	if err := s.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve sends the Hello, then answers requests until Close or end of
// input.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	typ := "sink"
	if s.source != nil {
		typ = "source"
	}
	if err := s.reply(out, plugin.KindHello, plugin.Hello{Protocol: plugin.ProtocolVersion, Type: typ, Name: s.name}); err != nil {
		return err
	}
	fr := plugin.NewFrameReader(in)
	for {
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		done, err := s.handle(ctx, out, f)
		if err != nil || done {
			return err
		}
	}
}

// handle answers one request; done is true after Close.
func (s *Server) handle(ctx context.Context, out io.Writer, f plugin.Frame) (bool, error) {
	var callErr error
	switch f.Kind {
	case plugin.KindOpen:
		var req plugin.OpenRequest
		if callErr = json.Unmarshal(f.Body, &req); callErr == nil {
			if s.source != nil {
				callErr = s.source.Open(ctx, req)
			} else {
				callErr = s.sink.Open(ctx, req)
			}
		}
	case plugin.KindPoll:
		if s.source == nil {
			return false, fmt.Errorf("%w: poll sent to a sink", ErrProtocol)
		}
		batch, err := s.source.Poll(ctx)
		if err == nil {
			return false, s.reply(out, plugin.KindBatch, batch)
		}
		callErr = err
	case plugin.KindReport:
		if s.source == nil {
			return false, fmt.Errorf("%w: report sent to a sink", ErrProtocol)
		}
		var res plugin.BatchResult
		if callErr = json.Unmarshal(f.Body, &res); callErr == nil {
			callErr = s.source.Report(ctx, res)
		}
	case plugin.KindConsume:
		if s.sink == nil {
			return false, fmt.Errorf("%w: consume sent to a source", ErrProtocol)
		}
		var batch plugin.SinkBatch
		if callErr = json.Unmarshal(f.Body, &batch); callErr == nil {
			callErr = s.sink.Consume(ctx, batch)
		}
	case plugin.KindClose:
		if s.source != nil {
			callErr = s.source.Close(ctx)
		} else {
			callErr = s.sink.Close(ctx)
		}
		if callErr != nil {
			return true, s.reply(out, plugin.KindError, plugin.ErrorBody{Message: callErr.Error()})
		}
		return true, s.reply(out, plugin.KindOk, nil)
	default:
		return false, fmt.Errorf("%w: unexpected frame kind %d", ErrProtocol, f.Kind)
	}
	if callErr != nil {
		return false, s.reply(out, plugin.KindError, plugin.ErrorBody{Message: callErr.Error()})
	}
	return false, s.reply(out, plugin.KindOk, nil)
}

// reply writes one frame with v as JSON (nil: empty body).
func (s *Server) reply(out io.Writer, kind uint8, v any) error {
	var body []byte
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return err
		}
	}
	var err error
	s.scratch, err = plugin.WriteFrame(out, s.scratch, kind, body)
	return err
}
