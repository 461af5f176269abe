package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/stratabroker/strata/connectors"
	"github.com/stratabroker/strata/connectors/plugin"
	"github.com/stratabroker/strata/net/units"
)

func init() { connectors.RegisterSink("http", func() plugin.Sink { return &httpSink{} }) }

// Limits of the http sink.
const (
	httpTimeoutDefault  = 10 * time.Second
	httpRetriesDefault  = 3
	httpRetriesMax      = 20
	httpBackoffDefault  = 100 * time.Millisecond
	httpBackoffMax      = 10 * time.Second
	httpErrorBodyMax    = 512
	httpContentTypeJSON = "application/json"
)

type httpConfig struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// Timeout bounds one request ("10s").
	Timeout string `json:"timeout"`
	// MaxRetries is how many times a failed request is retried.
	MaxRetries *int `json:"max_retries"`
	// RetryBackoff is the first pause between attempts (doubling).
	RetryBackoff string `json:"retry_backoff"`
}

// httpSink POSTs each batch to a URL as a JSON array of message objects
// (the jsonl line format). Connection errors, 429 and 5xx answers are
// retried with backoff; other answers outside 2xx fail the batch at once
// (the runtime delivers it again under at-least-once).
type httpSink struct {
	cfg     httpConfig
	client  *http.Client
	retries int
	backoff time.Duration
	buf     []byte
}

// errHTTPPermanent marks an answer retrying cannot fix.
var errHTTPPermanent = errors.New("http sink: request rejected")

func (s *httpSink) Open(_ context.Context, req plugin.OpenRequest) error {
	if err := decodeConfig(req.Config, &s.cfg); err != nil {
		return err
	}
	if s.cfg.URL == "" {
		return fmt.Errorf("%w: url is empty", ErrConfig)
	}
	timeout, err := durationOr(s.cfg.Timeout, httpTimeoutDefault)
	if err != nil {
		return err
	}
	if s.backoff, err = durationOr(s.cfg.RetryBackoff, httpBackoffDefault); err != nil {
		return err
	}
	s.retries = httpRetriesDefault
	if s.cfg.MaxRetries != nil {
		s.retries = *s.cfg.MaxRetries
	}
	if s.retries < 0 || s.retries > httpRetriesMax {
		return fmt.Errorf("%w: max_retries %d outside 0..%d", ErrConfig, s.retries, httpRetriesMax)
	}
	s.client = &http.Client{Timeout: timeout}
	return nil
}

func durationOr(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return time.Duration(d), nil
}

func (s *httpSink) Consume(ctx context.Context, b plugin.SinkBatch) error {
	s.buf = append(s.buf[:0], '[')
	for i := range b.Messages {
		if i > 0 {
			s.buf = append(s.buf, ',')
		}
		var err error
		if s.buf, err = appendLine(s.buf, formatJSONL, &b, &b.Messages[i]); err != nil {
			return err
		}
		s.buf = s.buf[:len(s.buf)-1] // drop the line's newline
	}
	s.buf = append(s.buf, ']')
	backoff := s.backoff
	var err error
	for attempt := 0; ; attempt++ {
		if err = s.post(ctx, s.buf); err == nil || errors.Is(err, errHTTPPermanent) || attempt == s.retries {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("http sink: %w (last error: %w)", ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, httpBackoffMax)
	}
}

func (s *httpSink) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %w", errHTTPPermanent, err)
	}
	req.Header.Set("Content-Type", httpContentTypeJSON)
	for k, v := range s.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, httpErrorBodyMax))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fmt.Errorf("http sink: %s answered %d: %s", s.cfg.URL, resp.StatusCode, msg)
	}
	return fmt.Errorf("%w: %s answered %d: %s", errHTTPPermanent, s.cfg.URL, resp.StatusCode, msg)
}

func (s *httpSink) Close(context.Context) error {
	if s.client != nil {
		s.client.CloseIdleConnections()
	}
	return nil
}
