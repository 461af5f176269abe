package wire

import "strconv"

// Code is a command code of PROTOCOL.md §3.2. Only NonReplicated requests
// carry it on the wire (Request header bytes 196..200); the other commands
// are identified by their operation byte alone.
type Code uint32

// Command codes of §3.2.
const (
	CodePing                         Code = 1
	CodeGetStats                     Code = 10
	CodeGetSnapshot                  Code = 11
	CodeGetClusterMetadata           Code = 12
	CodeDescribeOptions              Code = 13
	CodeGetMe                        Code = 20
	CodeGetClient                    Code = 21
	CodeGetClients                   Code = 22
	CodeGetUser                      Code = 31
	CodeGetUsers                     Code = 32
	CodeCreateUser                   Code = 33
	CodeDeleteUser                   Code = 34
	CodeUpdateUser                   Code = 35
	CodeUpdatePermissions            Code = 36
	CodeChangePassword               Code = 37
	CodeLoginUser                    Code = 38 // legacy: answered with Eviction 15
	CodeLogoutUser                   Code = 39
	CodeLoginRegister                Code = 40
	CodeGetPersonalAccessTokens      Code = 41
	CodeCreatePersonalAccessToken    Code = 42
	CodeDeletePersonalAccessToken    Code = 43
	CodeLoginWithPersonalAccessToken Code = 44 // legacy: answered with Eviction 15
	CodeLoginRegisterWithPat         Code = 45
	CodePollMessages                 Code = 100
	CodeSendMessages                 Code = 101
	CodeFlushUnsavedBuffer           Code = 102
	CodeGetConsumerOffset            Code = 120
	CodeStoreConsumerOffset          Code = 121
	CodeDeleteConsumerOffset         Code = 122
	CodeGetStream                    Code = 200
	CodeGetStreams                   Code = 201
	CodeCreateStream                 Code = 202
	CodeDeleteStream                 Code = 203
	CodeUpdateStream                 Code = 204
	CodePurgeStream                  Code = 205
	CodeGetTopic                     Code = 300
	CodeGetTopics                    Code = 301
	CodeCreateTopic                  Code = 302
	CodeDeleteTopic                  Code = 303
	CodeUpdateTopic                  Code = 304
	CodePurgeTopic                   Code = 305
	CodeCreatePartitions             Code = 402
	CodeDeletePartitions             Code = 403
	CodeDeleteSegments               Code = 503
	CodeGetConsumerGroup             Code = 600
	CodeGetConsumerGroups            Code = 601
	CodeCreateConsumerGroup          Code = 602
	CodeDeleteConsumerGroup          Code = 603
	CodeJoinConsumerGroup            Code = 604
	CodeLeaveConsumerGroup           Code = 605
	CodeSyncConsumerGroup            Code = 606
)

// RequestNumbering says which request number (header @168) a client puts
// on a command (§1.9, §3.2).
type RequestNumbering uint8

const (
	// NumberZero: Register sends 0.
	NumberZero RequestNumbering = iota
	// NumberCurrent: the current counter value, counter unchanged
	// (NonReplicated reads and partition operations).
	NumberCurrent
	// NumberNext: the current counter value, then the counter is
	// incremented (metadata operations and Logout).
	NumberNext
)

// CodeInfo describes one command of the §3.2 table.
type CodeInfo struct {
	Code Code
	Name string
	// Operation is the request header operation byte.
	Operation Operation
	// ReplyOperation is the operation byte of a successful reply.
	ReplyOperation Operation
	// Numbering is the request number the client sends.
	Numbering RequestNumbering
}

// codeTable is the §3.2 table, ascending by code.
var codeTable = [...]CodeInfo{
	{CodePing, "Ping", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetStats, "GetStats", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetSnapshot, "GetSnapshot", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetClusterMetadata, "GetClusterMetadata", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeDescribeOptions, "DescribeOptions", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetMe, "GetMe", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetClient, "GetClient", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetClients, "GetClients", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetUser, "GetUser", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetUsers, "GetUsers", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeCreateUser, "CreateUser", OpCreateUser, OpCreateUser, NumberNext},
	{CodeDeleteUser, "DeleteUser", OpDeleteUser, OpDeleteUser, NumberNext},
	{CodeUpdateUser, "UpdateUser", OpUpdateUser, OpUpdateUser, NumberNext},
	{CodeUpdatePermissions, "UpdatePermissions", OpUpdatePermissions, OpUpdatePermissions, NumberNext},
	{CodeChangePassword, "ChangePassword", OpChangePassword, OpChangePassword, NumberNext},
	{CodeLoginUser, "LoginUser", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeLogoutUser, "LogoutUser", OpLogout, OpLogout, NumberNext},
	{CodeLoginRegister, "LoginRegister", OpRegister, OpRegister, NumberZero},
	{CodeGetPersonalAccessTokens, "GetPersonalAccessTokens", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeCreatePersonalAccessToken, "CreatePersonalAccessToken", OpCreatePersonalAccessToken, OpCreatePersonalAccessToken, NumberNext},
	{CodeDeletePersonalAccessToken, "DeletePersonalAccessToken", OpDeletePersonalAccessToken, OpDeletePersonalAccessToken, NumberNext},
	{CodeLoginWithPersonalAccessToken, "LoginWithPersonalAccessToken", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeLoginRegisterWithPat, "LoginRegisterWithPat", OpRegister, OpRegister, NumberZero},
	{CodePollMessages, "PollMessages", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeSendMessages, "SendMessages", OpSendMessages, OpSendMessages, NumberCurrent},
	{CodeFlushUnsavedBuffer, "FlushUnsavedBuffer", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetConsumerOffset, "GetConsumerOffset", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeStoreConsumerOffset, "StoreConsumerOffset", OpStoreConsumerOffset, OpStoreConsumerOffset, NumberCurrent},
	{CodeDeleteConsumerOffset, "DeleteConsumerOffset", OpDeleteConsumerOffset, OpDeleteConsumerOffset, NumberCurrent},
	{CodeGetStream, "GetStream", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetStreams, "GetStreams", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeCreateStream, "CreateStream", OpCreateStream, OpCreateStream, NumberNext},
	{CodeDeleteStream, "DeleteStream", OpDeleteStream, OpDeleteStream, NumberNext},
	{CodeUpdateStream, "UpdateStream", OpUpdateStream, OpUpdateStream, NumberNext},
	{CodePurgeStream, "PurgeStream", OpPurgeStream, OpPurgeStream, NumberNext},
	{CodeGetTopic, "GetTopic", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetTopics, "GetTopics", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeCreateTopic, "CreateTopic", OpCreateTopic, OpCreateTopicWithAssignments, NumberNext},
	{CodeDeleteTopic, "DeleteTopic", OpDeleteTopic, OpDeleteTopic, NumberNext},
	{CodeUpdateTopic, "UpdateTopic", OpUpdateTopic, OpUpdateTopic, NumberNext},
	{CodePurgeTopic, "PurgeTopic", OpPurgeTopic, OpPurgeTopic, NumberNext},
	{CodeCreatePartitions, "CreatePartitions", OpCreatePartitions, OpCreatePartitionsWithAssignments, NumberNext},
	{CodeDeletePartitions, "DeletePartitions", OpDeletePartitions, OpDeletePartitions, NumberNext},
	{CodeDeleteSegments, "DeleteSegments", OpDeleteSegments, OpTruncatePartition, NumberNext},
	{CodeGetConsumerGroup, "GetConsumerGroup", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeGetConsumerGroups, "GetConsumerGroups", OpNonReplicated, OpNonReplicated, NumberCurrent},
	{CodeCreateConsumerGroup, "CreateConsumerGroup", OpCreateConsumerGroup, OpCreateConsumerGroup, NumberNext},
	{CodeDeleteConsumerGroup, "DeleteConsumerGroup", OpDeleteConsumerGroup, OpDeleteConsumerGroup, NumberNext},
	{CodeJoinConsumerGroup, "JoinConsumerGroup", OpJoinConsumerGroup, OpJoinConsumerGroup, NumberNext},
	{CodeLeaveConsumerGroup, "LeaveConsumerGroup", OpLeaveConsumerGroup, OpLeaveConsumerGroup, NumberNext},
	{CodeSyncConsumerGroup, "SyncConsumerGroup", OpNonReplicated, OpNonReplicated, NumberCurrent},
}

// Codes returns every command code of §3.2 in ascending order. The slice is
// fresh; callers may keep it.
func Codes() []Code {
	out := make([]Code, len(codeTable))
	for i := range codeTable {
		out[i] = codeTable[i].Code
	}
	return out
}

// LookupCode returns the §3.2 row for c.
func LookupCode(c Code) (CodeInfo, bool) {
	lo, hi := 0, len(codeTable)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if codeTable[mid].Code < c {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(codeTable) && codeTable[lo].Code == c {
		return codeTable[lo], true
	}
	return CodeInfo{}, false
}

// Known reports whether c is in the §3.2 table.
func (c Code) Known() bool { _, ok := LookupCode(c); return ok }

// String returns the §3.2 name of c, or "Code(n)".
func (c Code) String() string {
	if info, ok := LookupCode(c); ok {
		return info.Name
	}
	return "Code(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// OperationForCode returns the request header operation byte for c;
// OpReserved and false for an unknown code.
func OperationForCode(c Code) (Operation, bool) {
	info, ok := LookupCode(c)
	return info.Operation, ok
}

// ReplyOperationForCode returns the operation byte of a successful reply
// to c: the request's operation except CreateTopic → 64, CreatePartitions
// → 65, DeleteSegments → 68 (§3.2). Pre-commit denials carry the request's
// operation instead (see DenialOperation).
func ReplyOperationForCode(c Code) (Operation, bool) {
	info, ok := LookupCode(c)
	return info.ReplyOperation, ok
}

// DenialOperation returns the reply operation for a Reply with a non-zero
// status (empty body) to a request with operation op: op itself.
func DenialOperation(op Operation) Operation { return op }

// ResultReplyOperation returns the operation a result-framed reply
// (success, committed rejection or transient) to a request with operation
// op must carry: 64 for CreateTopic, 65 for CreatePartitions, 68 for
// DeleteSegments (never 138, §3.2), op otherwise.
func ResultReplyOperation(op Operation) Operation {
	switch op {
	case OpCreateTopic:
		return OpCreateTopicWithAssignments
	case OpCreatePartitions:
		return OpCreatePartitionsWithAssignments
	case OpDeleteSegments:
		return OpTruncatePartition
	}
	return op
}

// CodeForOperation returns the command code of a replicated or session
// operation (the inverse of OperationForCode for operations other than
// NonReplicated). Register maps to CodeLoginRegister (the PAT form shares
// the operation; the body shape distinguishes them).
func CodeForOperation(op Operation) (Code, bool) {
	if op == OpNonReplicated || op == OpReserved {
		return 0, false
	}
	for i := range codeTable {
		if codeTable[i].Operation == op {
			return codeTable[i].Code, true
		}
	}
	return 0, false
}

// IsNonReplicated reports whether c is sent as operation 2 with the code in
// the request header.
func (c Code) IsNonReplicated() bool {
	info, ok := LookupCode(c)
	return ok && info.Operation == OpNonReplicated
}
