package metadata

import "github.com/stratabroker/strata/net/wire/statecodec"

// Internal operation bytes of §3.1 (replica-plane only: a client sending
// them is evicted before they reach the machine). The server issues them
// under RootUserID.
const (
	// OperationRemoveConsumerGroupMember removes a client from every group
	// (logout, socket close, heartbeat eviction).
	OperationRemoveConsumerGroupMember uint8 = 66
	// OperationCompleteConsumerGroupHandOff completes one pending hand-off.
	OperationCompleteConsumerGroupHandOff uint8 = 67
)

// inFlightMax bounds the in-flight partition list of a join.
const inFlightMax = partitionsPerRequestMax * 1000

// CreateConsumerGroup creates a group named Name on a topic (602).
type CreateConsumerGroup struct {
	Stream Identifier
	Topic  Identifier
	Name   string
}

func (*CreateConsumerGroup) Operation() uint8 { return OperationCreateConsumerGroup }
func (o *CreateConsumerGroup) appendFields(dst []byte) []byte {
	return statecodec.AppendName(appendIdentifier(appendIdentifier(dst, o.Stream), o.Topic), o.Name)
}
func (o *CreateConsumerGroup) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
	o.Name = d.Name()
}

// DeleteConsumerGroup deletes a group and, through an effect, its offsets
// (603).
type DeleteConsumerGroup struct {
	Stream Identifier
	Topic  Identifier
	Group  Identifier
}

func (*DeleteConsumerGroup) Operation() uint8 { return OperationDeleteConsumerGroup }
func (o *DeleteConsumerGroup) appendFields(dst []byte) []byte {
	return appendIdentifier(appendIdentifier(appendIdentifier(dst, o.Stream), o.Topic), o.Group)
}
func (o *DeleteConsumerGroup) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
	o.Group = decodeIdentifier(d)
}

// JoinConsumerGroup makes the envelope's client a member (604). InFlight
// lists the topic's partitions with polled but uncommitted data for this
// group, as the server saw them before sequencing; the cooperative
// rebalance hands those off instead of moving them at once (§7).
type JoinConsumerGroup struct {
	Stream   Identifier
	Topic    Identifier
	Group    Identifier
	InFlight []uint32
}

func (*JoinConsumerGroup) Operation() uint8 { return OperationJoinConsumerGroup }
func (o *JoinConsumerGroup) appendFields(dst []byte) []byte {
	dst = appendIdentifier(appendIdentifier(appendIdentifier(dst, o.Stream), o.Topic), o.Group)
	dst = statecodec.AppendU32(dst, uint32(len(o.InFlight)))
	for _, p := range o.InFlight {
		dst = statecodec.AppendU32(dst, p)
	}
	return dst
}
func (o *JoinConsumerGroup) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
	o.Group = decodeIdentifier(d)
	n := d.Count(4)
	if n > inFlightMax {
		d.Fail(ErrMalformed)
		return
	}
	o.InFlight = nil
	for i := 0; i < n && d.Err() == nil; i++ {
		o.InFlight = append(o.InFlight, d.U32())
	}
}

// LeaveConsumerGroup removes the envelope's client from a group (605).
type LeaveConsumerGroup struct {
	Stream Identifier
	Topic  Identifier
	Group  Identifier
}

func (*LeaveConsumerGroup) Operation() uint8 { return OperationLeaveConsumerGroup }
func (o *LeaveConsumerGroup) appendFields(dst []byte) []byte {
	return appendIdentifier(appendIdentifier(appendIdentifier(dst, o.Stream), o.Topic), o.Group)
}
func (o *LeaveConsumerGroup) decodeFields(d *statecodec.Decoder) {
	o.Stream = decodeIdentifier(d)
	o.Topic = decodeIdentifier(d)
	o.Group = decodeIdentifier(d)
}

// RemoveConsumerGroupMember removes Client from every group it joined,
// rebalancing each (internal, operation 66). It commits 5006 when the
// client was a member of no group.
type RemoveConsumerGroupMember struct {
	Client ClientID
}

func (*RemoveConsumerGroupMember) Operation() uint8 { return OperationRemoveConsumerGroupMember }
func (o *RemoveConsumerGroupMember) appendFields(dst []byte) []byte {
	return statecodec.AppendU64(statecodec.AppendU64(dst, o.Client.Lo), o.Client.Hi)
}
func (o *RemoveConsumerGroupMember) decodeFields(d *statecodec.Decoder) {
	o.Client = ClientID{Lo: d.U64(), Hi: d.U64()}
}

// CompleteConsumerGroupHandOff moves a partition pending hand-off to its
// target (internal, operation 67). It commits 20 when no such hand-off is
// pending (already completed, or cleared by a later rebalance).
type CompleteConsumerGroupHandOff struct {
	StreamID, TopicID, GroupID, PartitionID uint32
}

func (*CompleteConsumerGroupHandOff) Operation() uint8 {
	return OperationCompleteConsumerGroupHandOff
}
func (o *CompleteConsumerGroupHandOff) appendFields(dst []byte) []byte {
	dst = statecodec.AppendU32(statecodec.AppendU32(dst, o.StreamID), o.TopicID)
	return statecodec.AppendU32(statecodec.AppendU32(dst, o.GroupID), o.PartitionID)
}
func (o *CompleteConsumerGroupHandOff) decodeFields(d *statecodec.Decoder) {
	o.StreamID, o.TopicID, o.GroupID, o.PartitionID = d.U32(), d.U32(), d.U32(), d.U32()
}
