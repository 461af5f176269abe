package uring

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func lookupOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestConfigFromLookup(t *testing.T) {
	cases := []struct {
		env     map[string]string
		want    Config
		errPart string
	}{
		{env: nil, want: Config{Entries: 4096, EventInterval: 128}},
		{env: map[string]string{EnvCapacity: "", EnvEventInterval: ""}, want: Config{Entries: 4096, EventInterval: 128}},
		{env: map[string]string{EnvCapacity: "256", EnvEventInterval: "16"}, want: Config{Entries: 256, EventInterval: 16}},
		{env: map[string]string{EnvCapacity: "32768"}, want: Config{Entries: 32768, EventInterval: 128}},
		{env: map[string]string{EnvCapacity: "0"}, errPart: "STRATA_SHARD_RUNTIME_CAPACITY=0 not in [1, 32768]"},
		{env: map[string]string{EnvCapacity: "65536"}, errPart: "STRATA_SHARD_RUNTIME_CAPACITY=65536 not in"},
		{env: map[string]string{EnvCapacity: "4k"}, errPart: `STRATA_SHARD_RUNTIME_CAPACITY="4k" is not an integer`},
		{env: map[string]string{EnvEventInterval: "-1"}, errPart: "STRATA_SHARD_EVENT_INTERVAL=-1 not in [1, 65536]"},
		{env: map[string]string{EnvEventInterval: " 12"}, errPart: "is not an integer"},
	}
	for _, c := range cases {
		got, err := ConfigFromLookup(lookupOf(c.env))
		if c.errPart != "" {
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.errPart) {
				t.Errorf("%v: error %v, want one containing %q", c.env, err, c.errPart)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v: %+v, %v; want %+v", c.env, got, err, c.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%v: parsed config does not validate: %v", c.env, err)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv(EnvCapacity, "64")
	t.Setenv(EnvEventInterval, "8")
	got, err := ConfigFromEnv()
	if err != nil || got != (Config{Entries: 64, EventInterval: 8}) {
		t.Fatalf("%+v, %v", got, err)
	}
}

// FuzzConfigFromLookup: parsing never panics and what it accepts validates.
func FuzzConfigFromLookup(f *testing.F) {
	f.Add("4096", "128")
	f.Add("", "x")
	f.Add("-9223372036854775808", "99999999999999999999")
	f.Fuzz(func(t *testing.T, capacity, interval string) {
		c, err := ConfigFromLookup(lookupOf(map[string]string{EnvCapacity: capacity, EnvEventInterval: interval}))
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("accepted %q %q into an invalid %+v: %v", capacity, interval, c, verr)
			}
		} else if !errors.Is(err, ErrConfig) {
			t.Fatalf("error %v is not ErrConfig", err)
		}
	})
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
