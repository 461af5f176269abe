package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratabroker/strata/connectors"
	"github.com/stratabroker/strata/connectors/plugin"
)

func init() {
	connectors.RegisterSink("postgres", func() plugin.Sink { return &postgresSink{} })
	connectors.RegisterSource("postgres", func() plugin.Source { return &postgresSource{} })
}

// Limits of the postgres connectors.
const (
	pgConnectTimeout      = 10 * time.Second
	pgBatchDefault        = 100
	pgBatchMax            = 10_000
	pgPollIntervalDefault = 100 * time.Millisecond
)

// pgIdentifier is what a table or column name may look like.
var pgIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

type postgresConfig struct {
	ConnectionString string `json:"connection_string"`
	Table            string `json:"table"`
	// AutoCreateTable creates the sink's table when missing (default true).
	AutoCreateTable *bool `json:"auto_create_table"`
	// PayloadFormat is the sink's payload column type: json (jsonb), text
	// or bytea (default: by the stream schema).
	PayloadFormat string `json:"payload_format"`
	// TrackingColumn is the source's incrementing column (default "id").
	TrackingColumn string `json:"tracking_column"`
	BatchSize      int    `json:"batch_size"`
	PollInterval   string `json:"poll_interval"`
}

func (c *postgresConfig) validate() error {
	if c.ConnectionString == "" {
		return fmt.Errorf("%w: connection_string is empty", ErrConfig)
	}
	if !pgIdentifier.MatchString(c.Table) {
		return fmt.Errorf("%w: table %q is not a plain identifier", ErrConfig, c.Table)
	}
	if c.BatchSize == 0 {
		c.BatchSize = pgBatchDefault
	}
	if c.BatchSize < 0 || c.BatchSize > pgBatchMax {
		return fmt.Errorf("%w: batch_size %d outside 1..%d", ErrConfig, c.BatchSize, pgBatchMax)
	}
	return nil
}

func pgConnect(ctx context.Context, dsn string) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, pgConnectTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	return conn, nil
}

// postgresSink inserts messages into a table, one row per message, keyed
// by (stream, topic, partition, offset): a batch delivered again after a
// crash inserts nothing twice.
type postgresSink struct {
	cfg    postgresConfig
	conn   *pgx.Conn
	insert string
}

func (s *postgresSink) Open(ctx context.Context, req plugin.OpenRequest) error {
	if err := decodeConfig(req.Config, &s.cfg); err != nil {
		return err
	}
	if err := s.cfg.validate(); err != nil {
		return err
	}
	switch s.cfg.PayloadFormat {
	case "", "json", "text", "bytea":
	default:
		return fmt.Errorf("%w: payload_format %q (want json, text or bytea)", ErrConfig, s.cfg.PayloadFormat)
	}
	conn, err := pgConnect(ctx, s.cfg.ConnectionString)
	if err != nil {
		return err
	}
	s.conn = conn
	table := pgx.Identifier{s.cfg.Table}.Sanitize()
	if s.cfg.AutoCreateTable == nil || *s.cfg.AutoCreateTable {
		ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	id BIGSERIAL PRIMARY KEY,
	strata_stream TEXT NOT NULL,
	strata_topic TEXT NOT NULL,
	strata_partition BIGINT NOT NULL,
	strata_offset NUMERIC(20) NOT NULL,
	strata_message_id NUMERIC(20) NOT NULL,
	strata_timestamp BIGINT NOT NULL,
	strata_origin_timestamp BIGINT NOT NULL,
	headers JSONB,
	payload_json JSONB,
	payload_text TEXT,
	payload_bytes BYTEA,
	created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
	UNIQUE (strata_stream, strata_topic, strata_partition, strata_offset))`, table)
		if _, err := conn.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("postgres sink: create table %s: %w", s.cfg.Table, err)
		}
	}
	s.insert = fmt.Sprintf(`INSERT INTO %s (strata_stream, strata_topic, strata_partition, strata_offset, strata_message_id,
	strata_timestamp, strata_origin_timestamp, headers, payload_json, payload_text, payload_bytes)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
	ON CONFLICT (strata_stream, strata_topic, strata_partition, strata_offset) DO NOTHING`, table)
	return nil
}

func (s *postgresSink) Consume(ctx context.Context, b plugin.SinkBatch) error {
	format := s.cfg.PayloadFormat
	if format == "" {
		format = map[string]string{"json": "json", "text": "text"}[b.Schema]
		if format == "" {
			format = "bytea"
		}
	}
	var batch pgx.Batch
	for i := range b.Messages {
		m := &b.Messages[i]
		var headers any
		if len(m.Headers) > 0 {
			h, err := json.Marshal(m.Headers)
			if err != nil {
				return err
			}
			headers = string(h)
		}
		var pj, pt, pb any
		switch format {
		case "json":
			pj = string(m.Payload)
		case "text":
			pt = string(m.Payload)
		default:
			pb = m.Payload
		}
		batch.Queue(s.insert, b.Stream, b.Topic, int64(b.Partition), fmt.Sprint(m.Offset), fmt.Sprint(m.ID),
			int64(m.Timestamp), int64(m.OriginTimestamp), headers, pj, pt, pb)
	}
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres sink: begin: %w", err)
	}
	if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
		_ = tx.Rollback(ctx)
		return fmt.Errorf("postgres sink: insert: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres sink: commit: %w", err)
	}
	return nil
}

func (s *postgresSink) Close(ctx context.Context) error {
	if s.conn == nil {
		return nil
	}
	return s.conn.Close(ctx)
}

// postgresState is the source's position: the last tracking value sent.
type postgresState struct {
	Last *string `json:"last,omitempty"`
}

// postgresSource reads rows whose tracking column (an incrementing
// number) is above the last one it handed out, as JSON objects, in order.
type postgresSource struct {
	cfg      postgresConfig
	conn     *pgx.Conn
	interval time.Duration
	last     *string
	query    string
	first    string
}

func (s *postgresSource) Open(ctx context.Context, req plugin.OpenRequest) error {
	if err := decodeConfig(req.Config, &s.cfg); err != nil {
		return err
	}
	if err := s.cfg.validate(); err != nil {
		return err
	}
	if s.cfg.TrackingColumn == "" {
		s.cfg.TrackingColumn = "id"
	}
	if !pgIdentifier.MatchString(s.cfg.TrackingColumn) {
		return fmt.Errorf("%w: tracking_column %q is not a plain identifier", ErrConfig, s.cfg.TrackingColumn)
	}
	var err error
	if s.interval, err = durationOr(s.cfg.PollInterval, pgPollIntervalDefault); err != nil {
		return err
	}
	if len(req.State) > 0 {
		var st postgresState
		if err := json.Unmarshal(req.State, &st); err != nil {
			return fmt.Errorf("postgres source: state: %w", err)
		}
		s.last = st.Last
	}
	table, col := pgx.Identifier{s.cfg.Table}.Sanitize(), pgx.Identifier{s.cfg.TrackingColumn}.Sanitize()
	s.first = fmt.Sprintf(`SELECT row_to_json(t)::text, t.%[2]s::text FROM %[1]s t ORDER BY t.%[2]s LIMIT $1`, table, col)
	s.query = fmt.Sprintf(`SELECT row_to_json(t)::text, t.%[2]s::text FROM %[1]s t WHERE t.%[2]s > $2::text::numeric ORDER BY t.%[2]s LIMIT $1`, table, col)
	s.conn, err = pgConnect(ctx, s.cfg.ConnectionString)
	return err
}

func (s *postgresSource) Poll(ctx context.Context) (plugin.ProducedBatch, error) {
	var rows pgx.Rows
	var err error
	if s.last == nil {
		rows, err = s.conn.Query(ctx, s.first, s.cfg.BatchSize)
	} else {
		rows, err = s.conn.Query(ctx, s.query, s.cfg.BatchSize, *s.last)
	}
	if err != nil {
		return plugin.ProducedBatch{}, fmt.Errorf("postgres source: query: %w", err)
	}
	var out plugin.ProducedBatch
	for rows.Next() {
		var doc, tracking string
		if err := rows.Scan(&doc, &tracking); err != nil {
			rows.Close()
			return plugin.ProducedBatch{}, fmt.Errorf("postgres source: scan: %w", err)
		}
		out.Messages = append(out.Messages, plugin.ProducedMessage{Payload: []byte(doc)})
		s.last = &tracking
	}
	if err := rows.Err(); err != nil {
		return plugin.ProducedBatch{}, fmt.Errorf("postgres source: rows: %w", err)
	}
	if len(out.Messages) == 0 {
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(s.interval):
		}
		return out, nil
	}
	st, err := json.Marshal(postgresState{Last: s.last})
	if err != nil {
		return out, err
	}
	out.State = st
	return out, nil
}

func (s *postgresSource) Report(context.Context, plugin.BatchResult) error { return nil }

func (s *postgresSource) Close(ctx context.Context) error {
	if s.conn == nil {
		return nil
	}
	return s.conn.Close(ctx)
}
