package server

import (
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/metadata"
)

// prepareCreateTopic decodes CreateTopic and resolves its options block
// into settings, the canonical explicit block and the derived block.
func (s *Server) prepareCreateTopic(r *wire.CreateTopicRequest) prepared {
	partitions := r.PartitionsCount
	block, err := r.Options.AppendTo(nil)
	if err != nil {
		return prepared{status: wire.ErrInvalidCommand}
	}
	if partitions > partitionsPerRequestMax {
		return prepared{status: wire.ErrTooManyPartitions}
	}
	parsed, err := wire.ParseTopicOptions(block, partitions)
	if err != nil {
		return prepared{status: wire.CodeOf(err)}
	}
	explicit, err := parsed.Explicit.AppendTo(nil)
	if err != nil {
		return prepared{status: wire.ErrInvalidOptionValue}
	}
	derived, err := parsed.Derived.AppendTo(nil)
	if err != nil {
		return prepared{status: wire.ErrInvalidOptionValue}
	}
	st := parsed.Settings
	return prepared{op: &metadata.CreateTopic{
		Stream:          metaID(r.StreamID),
		PartitionsCount: partitions,
		Name:            r.Name,
		Options: metadata.TopicOptions{
			MessageExpiryMicros:               st.MessageExpiry,
			CompressionAlgorithm:              st.CompressionAlgorithm,
			MaxTopicSizeBytes:                 st.MaxTopicSize,
			SegmentSizeBytes:                  st.SegmentSize,
			EnforceFsync:                      st.EnforceFsync,
			MessagesRequiredToSave:            st.MessagesRequiredToSave,
			SizeOfMessagesRequiredToSaveBytes: st.SizeOfMessagesRequiredToSave,
			PreallocateSegments:               st.PreallocateSegments,
			Durability:                        durabilityOf(st.Durability),
			ConsumerOffsetDurability:          durabilityOf(st.ConsumerOffsetDurability),
		},
		ExplicitOptions: explicit,
		DerivedOptions:  derived,
	}}
}

// durabilityOf maps the wire durability to the metadata one.
func durabilityOf(d wire.Durability) uint8 {
	if d == wire.DurabilityPersisted {
		return metadata.DurabilityPersisted
	}
	return metadata.DurabilityReplicated
}

// prepareUpdateTopic decodes UpdateTopic and validates its options.
func (s *Server) prepareUpdateTopic(r *wire.UpdateTopicRequest) prepared {
	stream, topic := metaID(r.StreamID), metaID(r.TopicID)
	block, err := r.Options.AppendTo(nil)
	if err != nil {
		return prepared{status: wire.ErrInvalidCommand}
	}
	update, err := wire.ParseTopicUpdateOptions(block)
	if err != nil {
		return prepared{status: wire.CodeOf(err)}
	}
	s.meta.mu.RLock()
	_, t, code := s.meta.snapshot().ResolveTopic(stream, topic)
	var segmentSize uint64
	if code == metadata.CodeOK {
		segmentSize = t.Options.SegmentSizeBytes
	}
	s.meta.mu.RUnlock()
	if code == metadata.CodeOK {
		if err := update.CheckSegmentSize(segmentSize); err != nil {
			return prepared{status: wire.CodeOf(err)}
		}
	}
	o := &metadata.UpdateTopic{Stream: stream, Topic: topic, Name: r.Name, Options: block}
	if update.CompressionAlgorithm != nil {
		o.SetCompression, o.CompressionAlgorithm = true, *update.CompressionAlgorithm
	}
	if update.MessageExpiry != nil {
		o.SetMessageExpiry, o.MessageExpiryMicros = true, *update.MessageExpiry
	}
	if update.MaxTopicSize != nil {
		o.SetMaxTopicSize, o.MaxTopicSizeBytes = true, *update.MaxTopicSize
	}
	return prepared{op: o}
}
