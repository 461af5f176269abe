package server

import (
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/partition"
)

// The codes a fenced partition answers with (README "Fenced partitions").
// They are Iggy's own codes for a log that cannot take or give messages,
// so an Iggy SDK reports them as errors and never as an empty partition.
const (
	// fencedSendCode refuses every send to a fenced partition.
	fencedSendCode = wire.ErrCannotAppendMessage
	// fencedPollCode refuses a poll that reaches the end of what a fenced
	// partition still serves (the damage, or what is missing): a poll that
	// starts there or later, a Last poll, a Timestamp poll that finds no
	// message before it. It also answers a poll whose read fails on disk.
	fencedPollCode = wire.ErrCannotReadMessage
)

// PartitionFence describes a fenced partition: what it still serves and
// why it stopped. Its owner publishes it once, when the partition is
// fenced; any goroutine may read it (Server.FencedPartitions).
type PartitionFence struct {
	StreamID, TopicID, PartitionID uint32
	// ServedBelow is the first offset the partition does not serve: the
	// verified prefix is every offset below it, and a poll starting at or
	// past it is refused with fencedPollCode.
	ServedBelow uint64
	// File is the damaged segment file, or the partition directory when
	// no one file is at fault (missing history, a failed write or sync).
	File string
	// Position is the byte of File where the damage starts (0 when File is
	// the directory).
	Position int64
	// Reason says what was found.
	Reason string
}

// wire returns the fence as the Stats extension entry (§4.11.10).
func (f *PartitionFence) wire() wire.FencedPartition {
	return wire.FencedPartition{StreamID: f.StreamID, TopicID: f.TopicID, PartitionID: f.PartitionID,
		ServedBelow: f.ServedBelow, File: strings.ToValidUTF8(f.File, "?"), Position: uint64(max(f.Position, 0)),
		Reason: strings.ToValidUTF8(f.Reason, "?")}
}

// servedBelow is the first offset a fenced partition does not serve: the
// log's damage when it found one (at open or by a read), else the end of
// what the partition holds. It runs on the owning shard.
func (p *partitionRuntime) servedBelow() uint64 {
	next := p.machine.NextOffset()
	if c := p.log.Fenced(); c != nil {
		return min(c.Offset, next)
	}
	return next
}

// publishFence makes a fence set in p.fenced visible: it builds the
// PartitionFence, logs it with the file, byte and reason, and sets the
// strata_partition_fenced series. It runs on the owning shard, once per
// fence (later calls do nothing).
func (p *partitionRuntime) publishFence() {
	if p.fenced == nil || p.fenceInfo.Load() != nil {
		return
	}
	f := &PartitionFence{StreamID: p.key.stream, TopicID: p.key.topic, PartitionID: p.key.partition,
		ServedBelow: p.servedBelow(), File: p.dir, Reason: strings.TrimPrefix(p.fenced.Error(), errFenced.Error()+": ")}
	if c := p.log.Fenced(); c != nil {
		f.File, f.Position = c.File, c.Position
		if c.Err != nil {
			f.Reason = c.Err.Error()
		}
	}
	p.fenceInfo.Store(f)
	p.s.metrics.partitionFenced.WithLabelValues(p.metricLabels()...).Set(1)
	p.s.log.Error("partition fenced: it serves only the offsets below served_below; sends and polls reaching it are refused until it is repaired (strata-server repair)",
		zap.Uint32("stream_id", f.StreamID), zap.Uint32("topic_id", f.TopicID), zap.Uint32("partition_id", f.PartitionID),
		zap.String("file", f.File), zap.Int64("byte", f.Position), zap.Uint64("served_below", f.ServedBelow),
		zap.String("reason", f.Reason))
}

// clearFence lifts the fence after a purge emptied the partition (the
// damaged files are gone with everything else). It runs on the owning
// shard.
func (p *partitionRuntime) clearFence() {
	if p.fenced == nil {
		return
	}
	p.fenced = nil
	if p.fenceInfo.Swap(nil) != nil {
		p.s.metrics.partitionFenced.DeleteLabelValues(p.metricLabels()...)
	}
	p.s.log.Warn("partition purged: the fence is lifted", zap.String("dir", p.dir))
}

// forgetFenceMetric removes the partition's fence series when it closes.
func (p *partitionRuntime) forgetFenceMetric() {
	if p.fenceInfo.Load() != nil {
		p.s.metrics.partitionFenced.DeleteLabelValues(p.metricLabels()...)
	}
}

// metricLabels are the partition's stream, topic and partition labels.
func (p *partitionRuntime) metricLabels() []string {
	return []string{strconv.FormatUint(uint64(p.key.stream), 10), strconv.FormatUint(uint64(p.key.topic), 10),
		strconv.FormatUint(uint64(p.key.partition), 10)}
}

// fencedPollLimit bounds a poll of a fenced partition to its verified
// prefix: it returns how many messages from start may be served, or
// ok = false when the poll reaches the fence and must be refused. A poll
// of no messages is never refused. It runs on the owning shard.
func (p *partitionRuntime) fencedPollLimit(start uint64, count uint32, strategy uint8) (uint32, bool) {
	if count == 0 {
		return 0, true
	}
	if strategy == partition.StrategyLast {
		// The last messages of the partition lie past the damage.
		return 0, false
	}
	end := p.servedBelow()
	if start >= end {
		return 0, false
	}
	return uint32(min(uint64(count), end-start)), true
}

// FencedPartitions returns every fenced partition, in key order. Any
// goroutine may call it; it reads what the owners published.
func (s *Server) FencedPartitions() []PartitionFence {
	var out []PartitionFence
	for _, p := range s.parts.all() {
		if f := p.fenceInfo.Load(); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// PartitionFenced returns the fence of one partition, if it is fenced.
func (s *Server) PartitionFenced(stream, topic, partition uint32) (PartitionFence, bool) {
	p, ok := s.parts.get(partKey{stream, topic, partition})
	if !ok {
		return PartitionFence{}, false
	}
	f := p.fenceInfo.Load()
	if f == nil {
		return PartitionFence{}, false
	}
	return *f, true
}

// pollFailure answers a poll whose partition refused it: storage refusals
// (a fenced partition, a failed read) and reads the partition's group
// could not serve here (57/58: not its primary, or its read index not
// confirmed) are denied with their code, so that no client mistakes them
// for an empty partition or the end of its log; other failures keep the
// empty reply of §6.6.
func pollFailure(out []byte, partitionID uint32, status wire.ErrorCode) response {
	switch status {
	case fencedPollCode, wire.ErrTransientNotAccepted, wire.ErrTransientNotCommitted:
		return deny(status)
	}
	return response{body: emptyPoll(out[:0], partitionID)}
}
