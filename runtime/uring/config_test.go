package uring

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/server/config"
)

// TestConfigValidate: the bounds the server's config checks are the
// kernel's and the loop's.
func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{}, {Entries: 1, EventInterval: 1}, {Entries: EntriesMax, EventInterval: EventIntervalMax}, DefaultConfig()} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	for _, c := range []Config{{Entries: EntriesMax + 1}, {Entries: -1}, {EventInterval: EventIntervalMax + 1}, {EventInterval: -1}} {
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v accepted: %v", c, err)
		}
	}
	if got := (Config{Entries: 3000}).roundedEntries(); got != 4096 {
		t.Errorf("3000 entries rounded to %d", got)
	}
}

// TestServerConfigBounds: [system.io] ring_entries and
// ring_event_interval accept exactly what Validate accepts.
func TestServerConfigBounds(t *testing.T) {
	for _, c := range []struct {
		env string
		ok  bool
	}{
		{"STRATA_SYSTEM_IO_RING_ENTRIES=" + strconv.Itoa(EntriesMax), true},
		{"STRATA_SYSTEM_IO_RING_ENTRIES=" + strconv.Itoa(EntriesMax+1), false},
		{"STRATA_SYSTEM_IO_RING_ENTRIES=0", false},
		{"STRATA_SYSTEM_IO_RING_EVENT_INTERVAL=" + strconv.Itoa(EventIntervalMax), true},
		{"STRATA_SYSTEM_IO_RING_EVENT_INTERVAL=" + strconv.Itoa(EventIntervalMax+1), false},
	} {
		if _, err := config.Load("", []string{c.env}); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.env, err, c.ok)
		}
	}
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := DefaultConfig(); cfg.System.IO.RingEntries != uint32(d.Entries) || cfg.System.IO.RingEventInterval != uint32(d.EventInterval) {
		t.Errorf("default.toml has %d/%d, the package defaults are %+v", cfg.System.IO.RingEntries, cfg.System.IO.RingEventInterval, d)
	}
}

func TestSetupErrorsExplain(t *testing.T) {
	cases := []struct {
		errno unix.Errno
		says  string
	}{
		{unix.ENOSYS, "kernel has no io_uring"},
		{unix.EPERM, "refused by seccomp or sysctl kernel.io_uring_disabled="},
		{unix.EINVAL, "kernel too old"},
		{unix.ENOMEM, "cannot allocate memory"},
	}
	for _, c := range cases {
		err := setupError(c.errno)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: %v, want ErrUnavailable and %q", c.errno, err, c.says)
		}
		if c.errno != unix.ENOSYS && !errors.Is(err, c.errno) {
			t.Errorf("%v: the errno is not wrapped: %v", c.errno, err)
		}
	}
}
