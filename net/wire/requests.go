package wire

// Request is a client → server request body of one command (§5). Every
// command of the §3.2 table has a concrete type (CreateStreamRequest,
// PollMessagesRequest...) whose pointer implements Request.
type Request interface {
	// Code is the command code (§3.2).
	Code() Code
	// AppendTo appends the encoded body to dst. It validates what the
	// protocol constrains (name lengths, kinds) and never truncates.
	AppendTo(dst []byte) ([]byte, error)
	// Decode replaces the receiver's contents with the body b. It never
	// panics; on error the receiver's contents are unspecified. Decoded
	// byte slices (batches, keys, option values) alias b.
	Decode(b []byte) error
}

// NewRequest returns a zero request of the type for code, for servers that
// dispatch on the code. Login (40 and 45) both share operation Register;
// use ParseLogin for a Register body.
func NewRequest(code Code) (Request, bool) {
	var r Request
	switch code {
	case CodePing:
		r = &PingRequest{}
	case CodeGetStats:
		r = &GetStatsRequest{}
	case CodeGetSnapshot:
		r = &GetSnapshotRequest{}
	case CodeGetClusterMetadata:
		r = &GetClusterMetadataRequest{}
	case CodeDescribeOptions:
		r = &DescribeOptionsRequest{}
	case CodeGetMe:
		r = &GetMeRequest{}
	case CodeGetClient:
		r = &GetClientRequest{}
	case CodeGetClients:
		r = &GetClientsRequest{}
	case CodeGetUser:
		r = &GetUserRequest{}
	case CodeGetUsers:
		r = &GetUsersRequest{}
	case CodeCreateUser:
		r = &CreateUserRequest{}
	case CodeDeleteUser:
		r = &DeleteUserRequest{}
	case CodeUpdateUser:
		r = &UpdateUserRequest{}
	case CodeUpdatePermissions:
		r = &UpdatePermissionsRequest{}
	case CodeChangePassword:
		r = &ChangePasswordRequest{}
	case CodeLogoutUser:
		r = &LogoutRequest{}
	case CodeLoginRegister:
		r = &LoginRegisterRequest{}
	case CodeGetPersonalAccessTokens:
		r = &GetPersonalAccessTokensRequest{}
	case CodeCreatePersonalAccessToken:
		r = &CreatePersonalAccessTokenRequest{}
	case CodeDeletePersonalAccessToken:
		r = &DeletePersonalAccessTokenRequest{}
	case CodeLoginRegisterWithPat:
		r = &LoginRegisterWithPatRequest{}
	case CodePollMessages:
		r = &PollMessagesRequest{}
	case CodeSendMessages:
		r = &SendMessagesRequest{}
	case CodeFlushUnsavedBuffer:
		r = &FlushUnsavedBufferRequest{}
	case CodeGetConsumerOffset:
		r = &GetConsumerOffsetRequest{}
	case CodeStoreConsumerOffset:
		r = &StoreConsumerOffsetRequest{}
	case CodeDeleteConsumerOffset:
		r = &DeleteConsumerOffsetRequest{}
	case CodeGetStream:
		r = &GetStreamRequest{}
	case CodeGetStreams:
		r = &GetStreamsRequest{}
	case CodeCreateStream:
		r = &CreateStreamRequest{}
	case CodeDeleteStream:
		r = &DeleteStreamRequest{}
	case CodeUpdateStream:
		r = &UpdateStreamRequest{}
	case CodePurgeStream:
		r = &PurgeStreamRequest{}
	case CodeGetTopic:
		r = &GetTopicRequest{}
	case CodeGetTopics:
		r = &GetTopicsRequest{}
	case CodeCreateTopic:
		r = &CreateTopicRequest{}
	case CodeDeleteTopic:
		r = &DeleteTopicRequest{}
	case CodeUpdateTopic:
		r = &UpdateTopicRequest{}
	case CodePurgeTopic:
		r = &PurgeTopicRequest{}
	case CodeCreatePartitions:
		r = &CreatePartitionsRequest{}
	case CodeDeletePartitions:
		r = &DeletePartitionsRequest{}
	case CodeDeleteSegments:
		r = &DeleteSegmentsRequest{}
	case CodeGetConsumerGroup:
		r = &GetConsumerGroupRequest{}
	case CodeGetConsumerGroups:
		r = &GetConsumerGroupsRequest{}
	case CodeCreateConsumerGroup:
		r = &CreateConsumerGroupRequest{}
	case CodeDeleteConsumerGroup:
		r = &DeleteConsumerGroupRequest{}
	case CodeJoinConsumerGroup:
		r = &JoinConsumerGroupRequest{}
	case CodeLeaveConsumerGroup:
		r = &LeaveConsumerGroupRequest{}
	case CodeSyncConsumerGroup:
		r = &SyncConsumerGroupRequest{}
	default:
		return nil, false
	}
	return r, true
}

// Body-less commands. Their Decode ignores whatever body was sent (the
// reference server does) and AppendTo writes nothing.

// PingRequest is code 1 (allowed before login).
type PingRequest struct{}

// GetStatsRequest is code 10.
type GetStatsRequest struct{}

// GetClusterMetadataRequest is code 12.
type GetClusterMetadataRequest struct{}

// GetMeRequest is code 20.
type GetMeRequest struct{}

// GetClientsRequest is code 22.
type GetClientsRequest struct{}

// GetUsersRequest is code 32.
type GetUsersRequest struct{}

// LogoutRequest is code 39 (operation Logout).
type LogoutRequest struct{}

// GetPersonalAccessTokensRequest is code 41.
type GetPersonalAccessTokensRequest struct{}

// GetStreamsRequest is code 201.
type GetStreamsRequest struct{}

func (*PingRequest) Code() Code                                { return CodePing }
func (*GetStatsRequest) Code() Code                            { return CodeGetStats }
func (*GetClusterMetadataRequest) Code() Code                  { return CodeGetClusterMetadata }
func (*GetMeRequest) Code() Code                               { return CodeGetMe }
func (*GetClientsRequest) Code() Code                          { return CodeGetClients }
func (*GetUsersRequest) Code() Code                            { return CodeGetUsers }
func (*LogoutRequest) Code() Code                              { return CodeLogoutUser }
func (*GetPersonalAccessTokensRequest) Code() Code             { return CodeGetPersonalAccessTokens }
func (*GetStreamsRequest) Code() Code                          { return CodeGetStreams }
func (*PingRequest) AppendTo(dst []byte) ([]byte, error)       { return dst, nil }
func (*GetStatsRequest) AppendTo(dst []byte) ([]byte, error)   { return dst, nil }
func (*GetMeRequest) AppendTo(dst []byte) ([]byte, error)      { return dst, nil }
func (*LogoutRequest) AppendTo(dst []byte) ([]byte, error)     { return dst, nil }
func (*GetUsersRequest) AppendTo(dst []byte) ([]byte, error)   { return dst, nil }
func (*GetClientsRequest) AppendTo(dst []byte) ([]byte, error) { return dst, nil }
func (*GetStreamsRequest) AppendTo(dst []byte) ([]byte, error) { return dst, nil }
func (*GetClusterMetadataRequest) AppendTo(dst []byte) ([]byte, error) {
	return dst, nil
}
func (*GetPersonalAccessTokensRequest) AppendTo(dst []byte) ([]byte, error) {
	return dst, nil
}
func (*PingRequest) Decode([]byte) error                    { return nil }
func (*GetStatsRequest) Decode([]byte) error                { return nil }
func (*GetClusterMetadataRequest) Decode([]byte) error      { return nil }
func (*GetMeRequest) Decode([]byte) error                   { return nil }
func (*GetClientsRequest) Decode([]byte) error              { return nil }
func (*GetUsersRequest) Decode([]byte) error                { return nil }
func (*LogoutRequest) Decode([]byte) error                  { return nil }
func (*GetPersonalAccessTokensRequest) Decode([]byte) error { return nil }
func (*GetStreamsRequest) Decode([]byte) error              { return nil }
