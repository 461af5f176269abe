package connectors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresDSNEnv names the PostgreSQL the tests use (.ci/run sets it).
const postgresDSNEnv = "STRATA_TEST_POSTGRES_DSN"

// postgresDefaultDSN is tried when the variable is unset.
const postgresDefaultDSN = "postgres://strata:strata@127.0.0.1:5432/strata_test?sslmode=disable"

// connectPostgres returns a connection and its DSN. With the variable set
// an unreachable server fails the test; without it the test is skipped
// with the reason.
func connectPostgres(t *testing.T) (*pgx.Conn, string) {
	t.Helper()
	dsn, explicit := os.LookupEnv(postgresDSNEnv)
	if !explicit {
		dsn = postgresDefaultDSN
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		if explicit {
			t.Fatalf("%s is set but PostgreSQL is unreachable: %v", postgresDSNEnv, err)
		}
		t.Skipf("SKIP PostgreSQL connector tests: no PostgreSQL server reachable (%v); set %s (.ci/run installs and starts one)", err, postgresDSNEnv)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn, dsn
}

func countRows(t *testing.T, conn *pgx.Conn, query string) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPostgresSink sends random messages through a real server into a
// table the sink creates, and counts the rows.
func TestPostgresSink(t *testing.T) {
	conn, dsn := connectPostgres(t)
	table := fmt.Sprintf("strata_sink_%d", rand.Uint32())
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	addr := startBroker(t)
	createTopic(t, addr, "events", "clicks", 3)
	configDir := t.TempDir()
	const total = 300
	writeFile(t, configDir, "gen_source.toml", sourceConfig(total, ""))
	writeFile(t, configDir, "pg_sink.toml", fmt.Sprintf(`plugin = "postgres"
[[streams]]
stream = "events"
topics = ["clicks"]
schema = "json"
batch_length = 64
[transforms.add_fields]
fields = [{ key = "tag", value = "pg" }]
[plugin_config]
connection_string = %q
table = %q
`, dsn, table))
	env := startRuntime(t, addr, configDir, t.TempDir())
	waitFor(t, "rows in PostgreSQL", func() bool {
		var n int
		err := conn.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n)
		return err == nil && n >= total
	})
	env.shutdown(t)
	if n := countRows(t, conn, "SELECT count(*) FROM "+table); n != total {
		t.Fatalf("%d rows, want %d", n, total)
	}
	if n := countRows(t, conn, "SELECT count(DISTINCT (payload_json->>'id')) FROM "+table+" WHERE payload_json->>'tag' = 'pg'"); n != total {
		t.Fatalf("%d distinct transformed ids, want %d", n, total)
	}
}

// TestPostgresSource reads rows of a table by its incrementing id into a
// stream, delivered by a file sink, then picks up rows added later.
func TestPostgresSource(t *testing.T) {
	conn, dsn := connectPostgres(t)
	ctx := context.Background()
	table := fmt.Sprintf("strata_src_%d", rand.Uint32())
	if _, err := conn.Exec(ctx, "CREATE TABLE "+table+" (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	insert := func(from, to int) {
		for i := from; i < to; i++ {
			if _, err := conn.Exec(ctx, "INSERT INTO "+table+" (name) VALUES ($1)", fmt.Sprintf("row-%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	insert(0, 40)
	addr := startBroker(t)
	createTopic(t, addr, "events", "rows", 1)
	configDir, stateDir := t.TempDir(), t.TempDir()
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	writeFile(t, configDir, "pgrows_source.toml", fmt.Sprintf(`plugin = "postgres"
[[streams]]
stream = "events"
topic = "rows"
schema = "json"
[plugin_config]
connection_string = %q
table = %q
tracking_column = "id"
batch_size = 15
poll_interval = "20ms"
`, dsn, table))
	writeFile(t, configDir, "rows_sink.toml", fmt.Sprintf(`plugin = "file"
[[streams]]
stream = "events"
topics = ["rows"]
[plugin_config]
path = %q
`, out))
	env := startRuntime(t, addr, configDir, stateDir)
	rowLines := func() []map[string]any {
		b, _ := os.ReadFile(out)
		var lines []map[string]any
		for _, l := range splitLines(b) {
			var v struct {
				Payload map[string]any `json:"payload"`
			}
			if err := json.Unmarshal(l, &v); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, v.Payload)
		}
		return lines
	}
	waitFor(t, "first rows", func() bool { return len(rowLines()) >= 40 })
	insert(40, 55)
	waitFor(t, "later rows", func() bool { return len(rowLines()) >= 55 })
	env.shutdown(t)
	lines := rowLines()
	if len(lines) != 55 {
		t.Fatalf("%d rows delivered, want 55", len(lines))
	}
	for i, l := range lines {
		if l["name"] != fmt.Sprintf("row-%d", i) {
			t.Fatalf("line %d: %v", i, l)
		}
	}
	b, err := os.ReadFile(filepath.Join(stateDir, "source_pgrows.state"))
	if err != nil || string(b) != `{"last":"55"}` {
		t.Fatalf("state %q %v", b, err)
	}
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		if i == len(b) {
			break // incomplete line
		}
		out = append(out, b[:i])
		b = b[i+1:]
	}
	return out
}
