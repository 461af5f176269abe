package strata_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// isoTime is the ts of every Strata log line (server/logging).
var isoTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{4}$|^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// logLevels are the level names of the configs, the logs and the CLI.
var logLevels = []string{"debug", "info", "warn", "error"}

// TestLogsLookAlike: strata-server and strata-connect write the same log
// format, text and JSON (same keys, the same time layout, levels spelled
// as in their configs), and the CLI's error line spells its level the
// same way. The server's text log said INFO where strata-connect said
// info.
func TestLogsLookAlike(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			srv := startServer(t, "STRATA_SYSTEM_LOGGING_FORMAT="+format)
			connect := startProgram(t, "strata-connect", append(cleanEnviron(),
				"STRATA_CONNECTORS_LOGGING_FORMAT="+format, "STRATA_CONNECTORS_STRATA_ADDRESS="+srv.tcp,
				"STRATA_CONNECTORS_HTTP_ENABLED=false", "STRATA_CONNECTORS_STATE_PATH="+filepath.Join(t.TempDir(), "state"),
				"STRATA_CONNECTORS_CONNECTORS_CONFIG_DIR="+t.TempDir()))
			connect.waitFor(t, regexp.MustCompile(`strata-connect running`))
			if err := connect.stop(t); err != nil {
				t.Fatalf("strata-connect: %v\n%s", err, connect.out)
			}
			if err := srv.stop(t); err != nil {
				t.Fatalf("strata-server: %v\n%s", err, srv.out)
			}
			for _, p := range []*process{srv.process, connect} {
				checked := 0
				isLogLine := func(l string) bool {
					if format == "json" {
						return strings.HasPrefix(l, "{")
					}
					return isoTime.MatchString(strings.SplitN(l, "\t", 2)[0])
				}
				for _, line := range lines(p.out.String(), isLogLine) {
					var ts, level, msg string
					if format == "json" {
						var rec map[string]any
						if err := json.Unmarshal([]byte(line), &rec); err != nil {
							t.Fatalf("%s: not JSON: %q", p.name, line)
						}
						ts, _ = rec["ts"].(string)
						level, _ = rec["level"].(string)
						msg, _ = rec["msg"].(string)
					} else {
						fields := strings.SplitN(line, "\t", 4)
						if len(fields) < 3 {
							t.Fatalf("%s: %q is not ts<TAB>level<TAB>msg", p.name, line)
						}
						ts, level, msg = fields[0], fields[1], fields[2]
					}
					if !isoTime.MatchString(ts) || !slices.Contains(logLevels, level) || msg == "" {
						t.Errorf("%s %s: ts %q level %q msg %q in %q", p.name, format, ts, level, msg, line)
					}
					checked++
				}
				if checked < 2 {
					t.Fatalf("%s wrote %d %s log lines:\n%s", p.name, checked, format, p.out)
				}
			}
		})
	}

	cmd := exec.Command(filepath.Join(binDir, "strata"), "--address", "127.0.0.1:1", "ping")
	cmd.Env = cleanEnviron()
	cmd.WaitDelay = 30 * time.Second
	out, _ := cmd.CombinedOutput()
	if first := strings.SplitN(strings.TrimSpace(string(out)), ":", 2)[0]; !slices.Contains(logLevels, first) {
		t.Errorf("the CLI's error line starts with %q, not a level spelled as in the logs: %q", first, out)
	}
}
