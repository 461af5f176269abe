package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// natsServerVersion is the nats-server release `compare nats` installs
// through the Go module proxy when .tools/nats-server is missing.
const natsServerVersion = "v2.15.2"

// ErrNATS: nats-server could not be installed or started.
var ErrNATS = errors.New("nats-server")

// natsReadyLine is nats-server's last boot line.
var natsReadyLine = regexp.MustCompile(`Server is ready`)

// installNATS returns <root>/.tools/nats-server, installing it with
// `GOBIN=<root>/.tools go install github.com/nats-io/nats-server/v2@version`
// when missing.
func installNATS(ctx context.Context, root, version string, progress io.Writer) (string, error) {
	toolsDir := filepath.Join(root, ".tools")
	bin := filepath.Join(toolsDir, "nats-server")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	fmt.Fprintf(progress, "installing nats-server %s into %s...\n", version, toolsDir)
	cmd := exec.CommandContext(ctx, "go", "install", "github.com/nats-io/nats-server/v2@"+version)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOBIN="+toolsDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: cannot install github.com/nats-io/nats-server/v2@%s through the Go module proxy (%w); "+
			"install a nats-server yourself and pass --nats-server PATH:\n%s", ErrNATS, version, err, out)
	}
	return bin, nil
}

// natsProcess is a nats-server child with JetStream on a fresh store dir.
type natsProcess struct {
	*serverProcess
	URL string
}

// startNATS writes a config (loopback, a free port, JetStream file storage
// in dir; sync_interval: always when syncAlways, else the default
// two-minute sync) and starts bin on it.
func startNATS(ctx context.Context, bin, dir string, syncAlways bool) (*natsProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, "listen: \"127.0.0.1:%d\"\n", port)
	fmt.Fprintf(&conf, "max_payload: %d\n", 8<<20)
	fmt.Fprintf(&conf, "jetstream {\n  store_dir: %q\n", filepath.Join(dir, "jetstream"))
	if syncAlways {
		conf.WriteString("  sync_interval: always\n")
	}
	conf.WriteString("}\n")
	confPath := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(confPath, []byte(conf.String()), 0o644); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNATS, err)
	}
	cmd := exec.Command(bin, "-c", confPath)
	p, _, err := startChild(ctx, cmd, natsReadyLine)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNATS, err)
	}
	return &natsProcess{serverProcess: p, URL: fmt.Sprintf("nats://127.0.0.1:%d", port)}, nil
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

// mkdir creates dir and its parents.
func mkdir(dir string) error { return os.MkdirAll(dir, 0o755) }

// removeAll removes a scratch directory.
func removeAll(dir string) error { return os.RemoveAll(dir) }
