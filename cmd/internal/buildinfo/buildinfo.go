// Package buildinfo says which build of a Strata binary is running: the
// version, the commit and build date, the Go toolchain and the Iggy
// protocol version it speaks. Every binary's --version flag and version
// command print it (package command wires them).
//
// The commit and date come from the Go toolchain's VCS stamp
// (runtime/debug.ReadBuildInfo: vcs.revision, vcs.time, vcs.modified) when
// the binary was built from a git checkout with `go build`; the Makefile
// sets them explicitly, which also covers builds without VCS stamping:
//
//	go build -ldflags "-X github.com/stratabroker/strata/cmd/internal/buildinfo.commit=$(git rev-parse --short=12 HEAD)
//	  -X github.com/stratabroker/strata/cmd/internal/buildinfo.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" ./cmd/...
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/stratabroker/strata/net/wire"
)

// Set at link time with -ldflags -X (see the package comment); empty when
// not given.
var (
	// commit is the source commit.
	commit string
	// date is the build time, RFC 3339 in UTC.
	date string
	// modified is "true" when the tree had uncommitted changes.
	modified string
)

// commitLen is how many hex digits of a commit are shown.
const commitLen = 12

// Unknown is shown for a field the build did not record.
const Unknown = "unknown"

// Info describes one binary's build. The JSON field names are part of the
// CLI's documented output (strata -o json version).
type Info struct {
	// Program is the binary's name ("strata-server").
	Program string `json:"program"`
	// Version is the server version Strata reports (wire.ServerVersion).
	Version string `json:"version"`
	// Commit is the source commit (12 hex digits), Unknown when the build
	// did not record it.
	Commit string `json:"commit"`
	// Modified is set when the source tree had uncommitted changes.
	Modified bool `json:"modified"`
	// Date is the build date (RFC 3339, UTC); when only the VCS stamp is
	// known it is the commit's date and DateSource says "commit".
	Date string `json:"date"`
	// DateSource is "build" (set at link time), "commit" (the commit time
	// from the VCS stamp) or "" when Date is Unknown.
	DateSource string `json:"date_source"`
	// GoVersion is the toolchain that built the binary ("go1.26.8").
	GoVersion string `json:"go_version"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
	// Protocol is the Iggy binary protocol version spoken ("0.11.0").
	Protocol string `json:"protocol_version"`
}

// Read returns the build information of the running binary, named
// program.
func Read(program string) Info {
	major, minor, patch := wire.UnpackVersion(wire.ProtocolVersion)
	info := Info{
		Program:   program,
		Version:   wire.ServerVersion,
		Commit:    Unknown,
		Date:      Unknown,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		Protocol:  fmt.Sprintf("%d.%d.%d", major, minor, patch),
	}
	var vcsRevision, vcsTime string
	var vcsModified bool
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsRevision = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				vcsModified = s.Value == "true"
			}
		}
	}
	switch {
	case commit != "":
		info.Commit, info.Modified = shorten(commit), modified == "true"
	case vcsRevision != "":
		info.Commit, info.Modified = shorten(vcsRevision), vcsModified
	}
	switch {
	case date != "":
		info.Date, info.DateSource = date, "build"
	case vcsTime != "":
		info.Date, info.DateSource = vcsTime, "commit"
	}
	return info
}

func shorten(c string) string {
	c = strings.TrimSpace(c)
	if len(c) > commitLen {
		return c[:commitLen]
	}
	return c
}

// Line is the one-line form: "strata-server 0.9.0-edge.5 (commit
// 3eed16f01234, built 2026-12-01T20:04:59Z, go1.26.8 linux/amd64,
// protocol 0.11.0)".
func (i Info) Line() string {
	c := i.Commit
	if i.Modified {
		c += "+modified"
	}
	return fmt.Sprintf("%s %s (commit %s, %s %s, %s %s, protocol %s)",
		i.Program, i.Version, c, i.dateLabel(), i.Date, i.GoVersion, i.Platform, i.Protocol)
}

func (i Info) dateLabel() string {
	if i.DateSource == "commit" {
		return "committed"
	}
	return "built"
}

// String is the multi-line form the version command prints.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", i.Program, i.Version)
	c := i.Commit
	if i.Modified {
		c += " (modified)"
	}
	date := i.Date
	if i.DateSource == "commit" {
		date += " (commit date; no build date recorded)"
	}
	fmt.Fprintf(&b, "  commit:    %s\n", c)
	fmt.Fprintf(&b, "  built:     %s\n", date)
	fmt.Fprintf(&b, "  go:        %s %s\n", i.GoVersion, i.Platform)
	fmt.Fprintf(&b, "  protocol:  %s (Apache Iggy binary protocol)\n", i.Protocol)
	return b.String()
}
