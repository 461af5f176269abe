package cli

import (
	"strconv"
	"strings"
	"time"

	"github.com/stratabroker/strata/net/units"
)

// Sizes and durations on the command line are read by net/units, the
// parser of the server's config, the connectors and the HTTP API, so a
// value written for one is good for all ("1.5 GiB", "30 days", "250 ms").

// durationFlag is a pflag.Value holding a time.Duration read by
// units.ParseDuration ("500 ms", "1.5s", "7 days").
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return units.FormatDuration(units.Duration(*f.d))
}

func (f durationFlag) Set(s string) error {
	d, err := units.ParseDuration(s)
	if err != nil {
		return err
	}
	*f.d = time.Duration(d)
	return nil
}

func (durationFlag) Type() string { return "duration" }

// checkOption checks a size or duration flag sent to the server as text
// (the server keeps the text in the topic's options), so that a value
// the server would refuse is a usage error naming the flag. A plain
// number is the wire unit (bytes, microseconds) and sent as a number;
// words are the option's words ("never", "unlimited", "server_default"),
// which the server reads itself.
func checkOption(flag, value string, parse func(string) error, words ...string) error {
	if _, err := strconv.ParseUint(value, 10, 64); err == nil {
		return nil
	}
	for _, w := range words {
		if strings.EqualFold(strings.TrimSpace(value), w) {
			return nil
		}
	}
	if err := parse(value); err != nil {
		return usagef("%s: %v", flag, err)
	}
	return nil
}

func parseDurationText(s string) error { _, err := units.ParseDuration(s); return err }
func parseBytesText(s string) error    { _, err := units.ParseBytes(s); return err }

// Words the server reads in message_expiry and max_topic_size.
var (
	expiryWords = []string{"never", "never_expire", "unlimited", "none", "server_default", "default"}
	sizeWords   = []string{"unlimited", "none", "server_default", "default"}
)

// patExpiry reads `pat create --expiry`: a duration, or 0/never for a
// token that never expires, in microseconds.
func patExpiry(s string) (uint64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "never", "none", "unlimited":
		return 0, nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return 0, usagef("--expiry: %v", err)
	}
	return d.Micros(), nil
}
