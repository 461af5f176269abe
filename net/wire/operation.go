package wire

import "strconv"

// Operation is the operation byte of a Request (@176) or Reply (@208)
// header, PROTOCOL.md §3.1.
type Operation uint8

// Operation values of §3.1. Any other byte is an invalid bit pattern.
const (
	OpReserved      Operation = 0
	OpRegister      Operation = 1
	OpNonReplicated Operation = 2
	OpLogout        Operation = 3

	// Internal operations; 64, 65 and 68 appear as Reply operations.
	OpCreateTopicWithAssignments      Operation = 64
	OpCreatePartitionsWithAssignments Operation = 65
	OpRemoveConsumerGroupMember       Operation = 66
	OpCompleteConsumerGroupRevocation Operation = 67
	OpTruncatePartition               Operation = 68

	// Metadata operations.
	OpCreateStream              Operation = 128
	OpUpdateStream              Operation = 129
	OpDeleteStream              Operation = 130
	OpPurgeStream               Operation = 131
	OpCreateTopic               Operation = 132
	OpUpdateTopic               Operation = 133
	OpDeleteTopic               Operation = 134
	OpPurgeTopic                Operation = 135
	OpCreatePartitions          Operation = 136
	OpDeletePartitions          Operation = 137
	OpDeleteSegments            Operation = 138
	OpCreateConsumerGroup       Operation = 139
	OpDeleteConsumerGroup       Operation = 140
	OpCreateUser                Operation = 141
	OpUpdateUser                Operation = 142
	OpDeleteUser                Operation = 143
	OpChangePassword            Operation = 144
	OpUpdatePermissions         Operation = 145
	OpCreatePersonalAccessToken Operation = 146
	OpDeletePersonalAccessToken Operation = 147
	OpJoinConsumerGroup         Operation = 148
	OpLeaveConsumerGroup        Operation = 149
	OpSendMessages              Operation = 160
	OpStoreConsumerOffset       Operation = 161
	OpDeleteConsumerOffset      Operation = 162
	operationMetadataFirst                = OpCreateStream
	operationMetadataLast                 = OpLeaveConsumerGroup
	operationInternalFirst                = OpCreateTopicWithAssignments
	operationInternalLast                 = OpTruncatePartition
	operationPartitionFirst               = OpSendMessages
	operationPartitionLast                = OpDeleteConsumerOffset
)

var operationNames = map[Operation]string{
	OpReserved: "Reserved", OpRegister: "Register", OpNonReplicated: "NonReplicated", OpLogout: "Logout",
	OpCreateTopicWithAssignments: "CreateTopicWithAssignments", OpCreatePartitionsWithAssignments: "CreatePartitionsWithAssignments",
	OpRemoveConsumerGroupMember: "RemoveConsumerGroupMember", OpCompleteConsumerGroupRevocation: "CompleteConsumerGroupRevocation",
	OpTruncatePartition: "TruncatePartition",
	OpCreateStream:      "CreateStream", OpUpdateStream: "UpdateStream", OpDeleteStream: "DeleteStream", OpPurgeStream: "PurgeStream",
	OpCreateTopic: "CreateTopic", OpUpdateTopic: "UpdateTopic", OpDeleteTopic: "DeleteTopic", OpPurgeTopic: "PurgeTopic",
	OpCreatePartitions: "CreatePartitions", OpDeletePartitions: "DeletePartitions", OpDeleteSegments: "DeleteSegments",
	OpCreateConsumerGroup: "CreateConsumerGroup", OpDeleteConsumerGroup: "DeleteConsumerGroup",
	OpCreateUser: "CreateUser", OpUpdateUser: "UpdateUser", OpDeleteUser: "DeleteUser", OpChangePassword: "ChangePassword",
	OpUpdatePermissions: "UpdatePermissions", OpCreatePersonalAccessToken: "CreatePersonalAccessToken",
	OpDeletePersonalAccessToken: "DeletePersonalAccessToken", OpJoinConsumerGroup: "JoinConsumerGroup",
	OpLeaveConsumerGroup: "LeaveConsumerGroup", OpSendMessages: "SendMessages",
	OpStoreConsumerOffset: "StoreConsumerOffset", OpDeleteConsumerOffset: "DeleteConsumerOffset",
}

// Defined reports whether op is one of the §3.1 values (Reserved included).
// A header carrying any other byte is an invalid bit pattern.
func (op Operation) Defined() bool {
	switch {
	case op <= OpLogout:
		return true
	case op >= operationInternalFirst && op <= operationInternalLast:
		return true
	case op >= operationMetadataFirst && op <= operationMetadataLast:
		return true
	case op >= operationPartitionFirst && op <= operationPartitionLast:
		return true
	}
	return false
}

// IsMetadata reports whether op is a client metadata operation (128..149).
func (op Operation) IsMetadata() bool {
	return op >= operationMetadataFirst && op <= operationMetadataLast
}

// IsInternal reports whether op is an internal operation (64..68) that a
// client must not send; Strata treats a client-sent 68 like 64..67 (§3.1).
func (op Operation) IsInternal() bool {
	return op >= operationInternalFirst && op <= operationInternalLast
}

// IsPartition reports whether op is a partition-plane operation (160..162).
func (op Operation) IsPartition() bool {
	return op >= operationPartitionFirst && op <= operationPartitionLast
}

// IsReplicated reports whether op goes through consensus: metadata and
// partition operations. Register and Logout are session operations.
func (op Operation) IsReplicated() bool { return op.IsMetadata() || op.IsPartition() }

// IsResultFramed reports whether a Reply with this operation starts its
// body with a result section (§4.9): every metadata operation except
// DeleteSegments (138), the internal operations 64..68, and the offset
// writes 161 and 162. Register (1) is result-framed only when its body is
// non-empty; this returns true for it and callers check the length.
func (op Operation) IsResultFramed() bool {
	switch {
	case op == OpDeleteSegments:
		return false
	case op.IsMetadata(), op.IsInternal():
		return true
	case op == OpStoreConsumerOffset, op == OpDeleteConsumerOffset:
		return true
	case op == OpRegister:
		return true
	}
	return false
}

// String returns the §3.1 name of op, or "Operation(n)".
func (op Operation) String() string {
	if n, ok := operationNames[op]; ok {
		return n
	}
	return "Operation(" + strconv.Itoa(int(op)) + ")"
}
