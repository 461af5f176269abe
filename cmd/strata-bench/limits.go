package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Machine-limit probes.
const (
	// limitChunkBytes is one write: about one 1000 × 1 KB batch.
	limitChunkBytes = 1 << 20
	// limitFileBytesMax bounds the probe file; it is truncated and
	// rewritten from the start when reached.
	limitFileBytesMax = 1 << 30
	// limitDurationDefault is each probe's total length (over its rounds).
	limitDurationDefault = 3 * time.Second
)

// Limits are this machine's ceilings, measured in the same run as the
// broker figures and used as their denominators.
type Limits struct {
	// LoopbackMBps is one TCP stream's throughput over 127.0.0.1.
	LoopbackMBps float64 `json:"loopback_tcp_mb_per_s"`
	// WriteMBps is sequential write throughput without sync (page cache).
	WriteMBps float64 `json:"seq_write_mb_per_s"`
	// WriteSyncMBps is sequential write throughput with an fdatasync after
	// every 1 MiB write, WriteSyncsPerSec the syncs per second it reached.
	WriteSyncMBps    float64 `json:"seq_write_fdatasync_mb_per_s"`
	WriteSyncsPerSec float64 `json:"fdatasync_per_s"`
	// Dir is where the disk probes wrote (the data dir's filesystem).
	Dir string `json:"dir"`
}

// For returns the limit a workload is compared with, and its name.
func (l *Limits) For(w Workload) (float64, string) {
	if w.Durability == "persisted" && !w.consumerOnly() {
		return l.WriteSyncMBps, "write+fdatasync"
	}
	return l.LoopbackMBps, "loopback"
}

// limitRounds is how many times each probe runs; the best round counts,
// since a shared machine can only make a probe slower than its limit.
const limitRounds = 3

// MeasureLimits runs each probe limitRounds times for d/limitRounds,
// writing into dir, and keeps the best round of each.
func MeasureLimits(ctx context.Context, dir string, d time.Duration) (*Limits, error) {
	if d <= 0 {
		d = limitDurationDefault
	}
	round := d / limitRounds
	l := &Limits{Dir: dir}
	for i := 0; i < limitRounds; i++ {
		loop, err := loopbackMBps(ctx, round)
		if err != nil {
			return nil, err
		}
		write, _, err := seqWriteMBps(ctx, dir, round, false)
		if err != nil {
			return nil, err
		}
		syncMBps, syncs, err := seqWriteMBps(ctx, dir, round, true)
		if err != nil {
			return nil, err
		}
		l.LoopbackMBps = max(l.LoopbackMBps, loop)
		l.WriteMBps = max(l.WriteMBps, write)
		if syncMBps > l.WriteSyncMBps {
			l.WriteSyncMBps, l.WriteSyncsPerSec = syncMBps, syncs
		}
	}
	return l, nil
}

// loopbackMBps streams 1 MiB writes over a loopback TCP connection for d.
func loopbackMBps(ctx context.Context, d time.Duration) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("loopback probe: %w", err)
	}
	defer ln.Close()
	type outcome struct {
		bytes int64
		err   error
	}
	got := make(chan outcome, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- outcome{err: err}
			return
		}
		defer c.Close()
		n, err := io.CopyBuffer(io.Discard, c, make([]byte, limitChunkBytes))
		got <- outcome{bytes: n, err: err}
	}()
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return 0, fmt.Errorf("loopback probe: %w", err)
	}
	buf := make([]byte, limitChunkBytes)
	start := time.Now()
	for time.Since(start) < d && ctx.Err() == nil {
		if _, err := c.Write(buf); err != nil {
			_ = c.Close()
			return 0, fmt.Errorf("loopback probe: %w", err)
		}
	}
	if err := c.Close(); err != nil {
		return 0, fmt.Errorf("loopback probe: %w", err)
	}
	o := <-got
	elapsed := time.Since(start)
	if o.err != nil {
		return 0, fmt.Errorf("loopback probe: %w", o.err)
	}
	return float64(o.bytes) / elapsed.Seconds() / bytesPerMB, nil
}

// seqWriteMBps appends 1 MiB chunks to a file in dir for d, with an
// fdatasync after each when sync, and returns MB/s and syncs/s.
func seqWriteMBps(ctx context.Context, dir string, d time.Duration, sync bool) (float64, float64, error) {
	f, err := os.CreateTemp(dir, "strata-bench-limits-*")
	if err != nil {
		return 0, 0, fmt.Errorf("disk probe: %w", err)
	}
	name := f.Name()
	defer os.Remove(name)
	buf := make([]byte, limitChunkBytes)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	var written, syncs, size int64
	start := time.Now()
	for time.Since(start) < d && ctx.Err() == nil {
		if size+limitChunkBytes > limitFileBytesMax {
			if err := f.Truncate(0); err != nil {
				return 0, 0, errors.Join(fmt.Errorf("disk probe: %w", err), f.Close())
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return 0, 0, errors.Join(fmt.Errorf("disk probe: %w", err), f.Close())
			}
			size = 0
		}
		if _, err := f.Write(buf); err != nil {
			return 0, 0, errors.Join(fmt.Errorf("disk probe: %w", err), f.Close())
		}
		size += limitChunkBytes
		written += limitChunkBytes
		if sync {
			if err := unix.Fdatasync(int(f.Fd())); err != nil {
				return 0, 0, errors.Join(fmt.Errorf("disk probe fdatasync: %w", err), f.Close())
			}
			syncs++
		}
	}
	elapsed := time.Since(start).Seconds()
	if err := f.Close(); err != nil {
		return 0, 0, fmt.Errorf("disk probe: %w", err)
	}
	return float64(written) / elapsed / bytesPerMB, float64(syncs) / elapsed, nil
}

// printLimits writes the limits block.
func printLimits(out io.Writer, l *Limits) {
	fmt.Fprintf(out, "machine limits (%s):\n", filepath.Clean(l.Dir))
	fmt.Fprintf(out, "  loopback TCP, one stream:        %9.1f MB/s\n", l.LoopbackMBps)
	fmt.Fprintf(out, "  sequential write, no sync:       %9.1f MB/s\n", l.WriteMBps)
	fmt.Fprintf(out, "  sequential write, fdatasync/MiB: %9.1f MB/s (%.0f syncs/s)\n", l.WriteSyncMBps, l.WriteSyncsPerSec)
}
