package partition

import (
	"encoding/binary"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/net/wire/statecodec"
)

// Result codes the partition machine commits (PROTOCOL.md §8).
const (
	CodeOK                     uint32 = 0
	CodeInvalidCommand         uint32 = 3
	CodeConsumerOffsetNotFound uint32 = 3021
	CodeInvalidOffset          uint32 = 4100
	// CodeOffsetsFull refuses a store of a new consumer's offset past
	// Config.OffsetsMax: Iggy's 3012 CannotCreateConsumerOffsetsDirectory,
	// the code of a consumer offset that could not be created.
	CodeOffsetsFull uint32 = 3012
)

// SendReplySize is the size of a SendMessages reply carrying one
// confirmation: [count u32 = 1][stream u32][topic u32][partition u32]
// [base_offset u64].
const SendReplySize = 4 + 4 + 4 + 4 + 8

// Apply executes one committed partition operation. timestamp is the
// sequencer's timestamp in micros.
//
// SendMessages (160) replies with the raw §6.5 body: count 1 and the
// SendConfirmation, or [count u32 = 0] when the batch cannot be stamped
// (nothing is stored); it asks for a flush (EffectFlush) once the
// unflushed batches reach a threshold, or after every batch with
// Config.FlushEveryBatch. Every other operation replies result-framed
// (§4.9): [0u32] or [1][0][code] with 4100 (empty partition, offset
// beyond the current offset, segments deleted past the flushed messages),
// 3021 (nothing stored), 3 (undecodable body, unknown operation). Apply
// never panics on body bytes. The caller takes the effects (TakeEffects)
// and carries them out before the next Apply.
func (m *Machine) Apply(op uint64, timestamp uint64, operation uint8, body []byte) (reply []byte) {
	m.lastOp = op
	reply = m.applyOperation(timestamp, operation, body)
	if invariantsEnabled {
		m.checkInvariants()
	}
	return reply
}

// applyOperation decodes and dispatches one operation.
func (m *Machine) applyOperation(timestamp uint64, operation uint8, body []byte) []byte {
	switch operation {
	case OperationSendMessages:
		_, send, err := DecodeSendMessages(body)
		if err != nil {
			return statecodec.AppendU32(nil, 0)
		}
		return m.send(timestamp, send.Batch)
	case OperationStoreConsumerOffset:
		_, store, err := DecodeStoreConsumerOffset(body)
		if err != nil {
			return rejectReply(CodeInvalidCommand)
		}
		return resultReply(m.storeOffset(store))
	case OperationDeleteConsumerOffset:
		_, del, err := DecodeDeleteConsumerOffset(body)
		if err != nil {
			return rejectReply(CodeInvalidCommand)
		}
		return resultReply(m.deleteOffset(del.Consumer))
	case OperationSetFlushThresholds:
		_, thresholds, err := DecodeSetFlushThresholds(body)
		if err != nil {
			return rejectReply(CodeInvalidCommand)
		}
		return resultReply(m.setFlushThresholds(thresholds))
	case OperationPurgePartition:
		_, purge, err := DecodePurgePartition(body)
		if err != nil {
			return rejectReply(CodeInvalidCommand)
		}
		return resultReply(m.purge(purge.Generation))
	case OperationDeleteSegments:
		_, del, err := DecodeDeleteSegments(body)
		if err != nil {
			return rejectReply(CodeInvalidCommand)
		}
		return resultReply(m.deleteSegments(del))
	}
	return rejectReply(CodeInvalidCommand)
}

func resultReply(code uint32) []byte {
	if code != CodeOK {
		return rejectReply(code)
	}
	return wire.AppendResultOK(nil)
}

// rejectReply returns the 12-byte committed rejection [1][0][code] (§4.9).
func rejectReply(code uint32) []byte {
	return wire.AppendResultError(make([]byte, 0, wire.ResultErrorSize), wire.ErrorCode(code))
}

// send stamps a copy of batch and appends it to the unflushed buffer.
func (m *Machine) send(timestamp uint64, batch []byte) []byte {
	if len(batch) < wire.BatchHeaderSize {
		return statecodec.AppendU32(nil, 0)
	}
	view := wire.BatchView(batch)
	count := view.MessageCount()
	if count == 0 || view.BatchLength() != uint64(len(batch)) {
		return statecodec.AppendU32(nil, 0)
	}
	if m.nextOffset+uint64(count) < m.nextOffset {
		return statecodec.AppendU32(nil, 0)
	}
	baseTimestamp := max(timestamp, m.lastTimestamp)
	baseOffset := m.nextOffset
	stamped, token := m.borrow(len(batch))
	copy(stamped, batch)
	if err := wire.StampBatch(stamped, uint64(m.cfg.PartitionID), baseOffset, baseTimestamp); err != nil {
		if m.cfg.Buffers != nil {
			m.cfg.Buffers.Return(token)
		}
		return statecodec.AppendU32(nil, 0)
	}
	m.nextOffset += uint64(count)
	m.lastTimestamp = baseTimestamp
	m.messagesCount += uint64(count)
	m.sizeBytes += uint64(len(stamped))
	m.unflushed = append(m.unflushed, stamped)
	m.unflushedTokens = append(m.unflushedTokens, token)
	m.unflushedMessages += uint64(count)
	m.unflushedBytes += uint64(len(stamped))
	if m.cfg.FlushEveryBatch || m.FlushDue() {
		m.emit(Effect{Kind: EffectFlush, UpTo: m.nextOffset - 1})
	}
	reply := make([]byte, 0, SendReplySize)
	reply = statecodec.AppendU32(reply, 1)
	reply = statecodec.AppendU32(reply, m.cfg.StreamID)
	reply = statecodec.AppendU32(reply, m.cfg.TopicID)
	reply = statecodec.AppendU32(reply, m.cfg.PartitionID)
	return statecodec.AppendU64(reply, baseOffset)
}

// storeOffset applies §5.7/§6.7: the partition must hold the offset.
func (m *Machine) storeOffset(o StoreConsumerOffset) uint32 {
	current, ok := m.CurrentOffset()
	if !ok || o.Offset > current {
		return CodeInvalidOffset
	}
	if previous, stored := m.offsets[o.Consumer]; stored && o.Mode == StoreAutoCommit && previous >= o.Offset {
		return CodeOK
	}
	if _, stored := m.offsets[o.Consumer]; !stored && len(m.offsets) >= m.offsetsMax() {
		return CodeOffsetsFull
	}
	m.offsets[o.Consumer] = o.Offset
	m.emit(Effect{Kind: EffectOffsetStored, Consumer: o.Consumer, Offset: o.Offset, AutoCommit: o.Mode == StoreAutoCommit})
	return CodeOK
}

// offsetsMax is the bound of stored offsets (Config.OffsetsMax).
func (m *Machine) offsetsMax() int {
	if m.cfg.OffsetsMax > 0 {
		return min(m.cfg.OffsetsMax, consumerOffsetsMax)
	}
	return consumerOffsetsMax
}

func (m *Machine) deleteOffset(key ConsumerKey) uint32 {
	if _, stored := m.offsets[key]; !stored {
		return CodeConsumerOffsetNotFound
	}
	delete(m.offsets, key)
	m.emit(Effect{Kind: EffectOffsetDeleted, Consumer: key})
	return CodeOK
}

// setFlushThresholds applies SetFlushThresholds (0 = the default) and
// asks for a flush when the unflushed batches already reach a lowered
// threshold.
func (m *Machine) setFlushThresholds(o SetFlushThresholds) uint32 {
	m.cfg.MessagesRequiredToSave = o.MessagesRequiredToSave
	m.cfg.SizeOfMessagesRequiredToSaveBytes = o.SizeOfMessagesRequiredToSaveBytes
	m.cfg = m.cfg.withDefaults()
	if len(m.unflushed) > 0 && m.FlushDue() {
		m.emit(Effect{Kind: EffectFlush, UpTo: m.nextOffset - 1})
	}
	return CodeOK
}

// purge applies PurgePartition: offsets restart at 0, counters and
// consumer offsets are cleared, the unflushed batches are dropped (their
// buffers returned). lastTimestamp is kept so base timestamps stay
// monotonic. A generation at or below the last purge's changes nothing.
func (m *Machine) purge(generation uint64) uint32 {
	if generation != 0 && generation <= m.purgeGeneration {
		return CodeOK
	}
	m.nextOffset, m.firstOffset = 0, 0
	m.messagesCount, m.sizeBytes = 0, 0
	m.offsets = make(map[ConsumerKey]uint64)
	m.ReleaseBuffers()
	m.purgeGeneration = max(m.purgeGeneration, generation)
	m.emit(Effect{Kind: EffectPurged, Generation: generation})
	return CodeOK
}

// deleteSegments applies DeleteSegments: the messages below BelowOffset
// are gone. Offsets are unchanged (the partition keeps counting from
// NextOffset); the counters lose what the deleted segments held, never
// what the unflushed buffer still holds. Only flushed messages can be in
// a sealed segment: a deletion reaching an unflushed one is rejected.
func (m *Machine) deleteSegments(o DeleteSegments) uint32 {
	flushedBelow := m.FlushedEnd()
	if o.BelowOffset > flushedBelow {
		return CodeInvalidOffset
	}
	if o.BelowOffset <= m.firstOffset {
		return CodeOK
	}
	m.firstOffset = o.BelowOffset
	m.messagesCount -= min(o.Messages, m.messagesCount-m.unflushedMessages)
	m.sizeBytes -= min(o.SizeBytes, m.sizeBytes-min(m.sizeBytes, m.unflushedBytes))
	m.emit(Effect{Kind: EffectSegmentsDeleted, Below: o.BelowOffset})
	return CodeOK
}

// SendConfirmationBaseOffset reads the base offset from a SendMessages
// reply; ok is false for a reply without a confirmation.
func SendConfirmationBaseOffset(reply []byte) (baseOffset uint64, ok bool) {
	if len(reply) != SendReplySize || binary.LittleEndian.Uint32(reply) != 1 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(reply[16:]), true
}
