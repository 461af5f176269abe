package wire

// The consumer-group commands 600-606. The group id is an Identifier:
// numeric group id or group name.

// GetConsumerGroupsRequest is code 601: `Id stream`, `Id topic`.
type GetConsumerGroupsRequest struct{ StreamID, TopicID Identifier }

// Code returns CodeGetConsumerGroups.
func (*GetConsumerGroupsRequest) Code() Code { return CodeGetConsumerGroups }

// AppendTo appends the body.
func (r *GetConsumerGroupsRequest) AppendTo(dst []byte) ([]byte, error) {
	return appendIDs(dst, r.StreamID, r.TopicID)
}

// Decode decodes the body.
func (r *GetConsumerGroupsRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) { d.streamTopic(&r.StreamID, &r.TopicID) })
}

// CreateConsumerGroupRequest is code 602: `Id stream`, `Id topic`, `Name`.
type CreateConsumerGroupRequest struct {
	StreamID Identifier
	TopicID  Identifier
	Name     string
}

// Code returns CodeCreateConsumerGroup.
func (*CreateConsumerGroupRequest) Code() Code { return CodeCreateConsumerGroup }

// AppendTo appends the body.
func (r *CreateConsumerGroupRequest) AppendTo(dst []byte) ([]byte, error) {
	dst, err := appendIDs(dst, r.StreamID, r.TopicID)
	if err != nil {
		return dst, err
	}
	return AppendName(dst, r.Name)
}

// Decode decodes the body.
func (r *CreateConsumerGroupRequest) Decode(b []byte) error {
	return decodeFields(b, func(d *decoder) {
		d.streamTopic(&r.StreamID, &r.TopicID)
		r.Name = d.name("group name")
	})
}

// GroupTarget is the `Id stream`, `Id topic`, `Id group` body shared by
// codes 600, 603, 604, 605 and 606.
type GroupTarget struct {
	StreamID Identifier
	TopicID  Identifier
	GroupID  Identifier
}

func (g *GroupTarget) appendTo(dst []byte) ([]byte, error) {
	return appendIDs(dst, g.StreamID, g.TopicID, g.GroupID)
}

// decode reads the three ids; trailing bytes are ignored (decodeFields).
func (g *GroupTarget) decode(b []byte) error {
	d := newDecoder(b)
	d.streamTopic(&g.StreamID, &g.TopicID)
	g.GroupID = d.identifier("group id")
	return d.err
}

// GetConsumerGroupRequest is code 600.
type GetConsumerGroupRequest struct{ GroupTarget }

// DeleteConsumerGroupRequest is code 603.
type DeleteConsumerGroupRequest struct{ GroupTarget }

// JoinConsumerGroupRequest is code 604.
type JoinConsumerGroupRequest struct{ GroupTarget }

// LeaveConsumerGroupRequest is code 605.
type LeaveConsumerGroupRequest struct{ GroupTarget }

// SyncConsumerGroupRequest is code 606.
type SyncConsumerGroupRequest struct{ GroupTarget }

func (*GetConsumerGroupRequest) Code() Code    { return CodeGetConsumerGroup }
func (*DeleteConsumerGroupRequest) Code() Code { return CodeDeleteConsumerGroup }
func (*JoinConsumerGroupRequest) Code() Code   { return CodeJoinConsumerGroup }
func (*LeaveConsumerGroupRequest) Code() Code  { return CodeLeaveConsumerGroup }
func (*SyncConsumerGroupRequest) Code() Code   { return CodeSyncConsumerGroup }

func (r *GetConsumerGroupRequest) AppendTo(dst []byte) ([]byte, error)    { return r.appendTo(dst) }
func (r *DeleteConsumerGroupRequest) AppendTo(dst []byte) ([]byte, error) { return r.appendTo(dst) }
func (r *JoinConsumerGroupRequest) AppendTo(dst []byte) ([]byte, error)   { return r.appendTo(dst) }
func (r *LeaveConsumerGroupRequest) AppendTo(dst []byte) ([]byte, error)  { return r.appendTo(dst) }
func (r *SyncConsumerGroupRequest) AppendTo(dst []byte) ([]byte, error)   { return r.appendTo(dst) }

func (r *GetConsumerGroupRequest) Decode(b []byte) error    { return r.decode(b) }
func (r *DeleteConsumerGroupRequest) Decode(b []byte) error { return r.decode(b) }
func (r *JoinConsumerGroupRequest) Decode(b []byte) error   { return r.decode(b) }
func (r *LeaveConsumerGroupRequest) Decode(b []byte) error  { return r.decode(b) }
func (r *SyncConsumerGroupRequest) Decode(b []byte) error   { return r.decode(b) }
