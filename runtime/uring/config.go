package uring

import (
	"fmt"
	"math/bits"
)

// Defaults and bounds of the ring configuration (the architecture seed:
// a 4096-entry submission queue, the IO driver polled every 128 ticks).
const (
	EntriesDefault       = 4096
	EventIntervalDefault = 128
	// EntriesMax is the kernel's limit on submission queue entries.
	EntriesMax = entriesMax
	// EventIntervalMax bounds the event interval so a loop never goes an
	// unbounded number of steps without polling its ring.
	EventIntervalMax = 1 << 16
)

// Config sizes a ring. The server takes it from [system.io] ring_entries
// and ring_event_interval.
type Config struct {
	// Entries is the submission queue size and the bound on operations in
	// flight; the kernel rounds it up to a power of two. 0 = default.
	Entries int
	// EventInterval is how many queued requests a loop handles between two
	// visits to the ring (submit and reap). 0 = default.
	EventInterval int
}

// DefaultConfig returns the built-in defaults.
func DefaultConfig() Config {
	return Config{Entries: EntriesDefault, EventInterval: EventIntervalDefault}
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.Entries == 0 {
		c.Entries = EntriesDefault
	}
	if c.EventInterval == 0 {
		c.EventInterval = EventIntervalDefault
	}
	return c
}

// Validate reports a configuration the kernel or the loop would refuse.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.Entries < 1 || c.Entries > EntriesMax {
		return fmt.Errorf("ring entries %d not in [1, %d]: %w", c.Entries, EntriesMax, ErrConfig)
	}
	if c.EventInterval < 1 || c.EventInterval > EventIntervalMax {
		return fmt.Errorf("event interval %d not in [1, %d]: %w", c.EventInterval, EventIntervalMax, ErrConfig)
	}
	return nil
}

// roundedEntries is Entries rounded up to the power of two the kernel uses.
func (c Config) roundedEntries() int {
	n := c.withDefaults().Entries
	return 1 << bits.Len(uint(n-1))
}
