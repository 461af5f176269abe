// Command jsonlsink is an example external sink connector: it appends every
// message it receives to a file as one JSON line
// {"partition":..,"offset":..,"payload":..}. Build it with go build and
// point a sink config's path at the binary:
//
//	path = "/usr/local/bin/jsonlsink"
//	[plugin_config]
//	path = "/tmp/out.jsonl"
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/stratabroker/strata/connectors/plugin"
	"github.com/stratabroker/strata/connectors/sdk"
)

type config struct {
	Path string `json:"path"`
}

type sink struct {
	file *os.File
}

func (s *sink) Open(_ context.Context, req plugin.OpenRequest) error {
	var c config
	if err := json.Unmarshal(req.Config, &c); err != nil {
		return fmt.Errorf("jsonlsink: config: %w", err)
	}
	if c.Path == "" {
		return errors.New("jsonlsink: config needs path")
	}
	f, err := os.OpenFile(c.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.file = f
	fmt.Fprintf(os.Stderr, "jsonlsink %d writing to %s\n", req.ID, c.Path)
	return nil
}

type line struct {
	Partition uint32          `json:"partition"`
	Offset    uint64          `json:"offset"`
	Payload   json.RawMessage `json:"payload"`
}

func (s *sink) Consume(_ context.Context, b plugin.SinkBatch) error {
	w := bufio.NewWriter(s.file)
	enc := json.NewEncoder(w)
	for _, m := range b.Messages {
		payload := json.RawMessage(m.Payload)
		if !json.Valid(payload) {
			q, _ := json.Marshal(string(m.Payload))
			payload = q
		}
		if err := enc.Encode(line{Partition: b.Partition, Offset: m.Offset, Payload: payload}); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return s.file.Sync()
}

func (s *sink) Close(context.Context) error {
	if s.file == nil {
		return nil
	}
	return s.file.Close()
}

func main() { sdk.Main(sdk.ServeSink("jsonlsink", &sink{})) }
