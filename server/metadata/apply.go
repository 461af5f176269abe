package metadata

// Apply executes one committed operation and returns its result-framed
// reply (§4.9): [0u32] followed by the success payload, or the 12-byte
// [1][0][code] committed rejection. op is the commit number, timestamp the
// sequencer's timestamp in micros (used for every created_at and for token
// expiry), operation the §3.1 operation byte and body the EncodeOp bytes.
// A body that does not decode commits 3 (InvalidCommand). Apply never
// panics on body bytes.
func (m *Machine) Apply(op uint64, timestamp uint64, operation uint8, body []byte) (reply []byte) {
	m.lastOp = op
	env, o, err := DecodeOp(operation, body)
	if err != nil {
		return rejectReply(CodeInvalidCommand)
	}
	if !m.admits(o, len(body)) {
		// Refused for the state's bound (StateBytesMax): nothing changed,
		// so the cached size stands.
		return rejectReply(limitCode(o))
	}
	m.size = -1
	payload, code := m.applyOp(env, timestamp, o)
	if invariantsEnabled {
		m.checkInvariants()
	}
	if code != CodeOK {
		return rejectReply(code)
	}
	return okReply(payload)
}

// applyOp dispatches a decoded operation to its handler.
func (m *Machine) applyOp(env Envelope, timestamp uint64, o Op) ([]byte, Code) {
	switch o := o.(type) {
	case *CreateStream:
		return m.createStream(env, timestamp, o)
	case *UpdateStream:
		return nil, m.updateStream(env, o)
	case *DeleteStream:
		return nil, m.deleteStream(env, o)
	case *PurgeStream:
		return nil, m.purgeStream(env, o)
	case *CreateTopic:
		return m.createTopic(env, timestamp, o)
	case *UpdateTopic:
		return nil, m.updateTopic(env, o)
	case *DeleteTopic:
		return nil, m.deleteTopic(env, o)
	case *PurgeTopic:
		return nil, m.purgeTopic(env, o)
	case *CreatePartitions:
		return nil, m.createPartitions(env, timestamp, o)
	case *DeletePartitions:
		return nil, m.deletePartitions(env, o)
	case *DeleteSegments:
		return nil, m.deleteSegments(env, o)
	case *CreateUser:
		return m.createUser(env, timestamp, o)
	case *UpdateUser:
		return nil, m.updateUser(env, o)
	case *DeleteUser:
		return nil, m.deleteUser(env, o)
	case *ChangePassword:
		return nil, m.changePassword(env, o)
	case *UpdatePermissions:
		return nil, m.updatePermissions(env, o)
	case *CreatePersonalAccessToken:
		return m.createToken(env, timestamp, o)
	case *DeletePersonalAccessToken:
		return nil, m.deleteToken(env, o)
	case *CreateConsumerGroup:
		return m.createConsumerGroup(env, o)
	case *DeleteConsumerGroup:
		return nil, m.deleteConsumerGroup(env, o)
	case *JoinConsumerGroup:
		return nil, m.joinConsumerGroup(env, timestamp, o)
	case *LeaveConsumerGroup:
		return nil, m.leaveConsumerGroup(env, o)
	case *RemoveConsumerGroupMember:
		return nil, m.removeConsumerGroupMember(o)
	case *CompleteConsumerGroupHandOff:
		return nil, m.completeConsumerGroupHandOff(o)
	}
	return nil, CodeInvalidCommand
}

// allowed reports whether userID passes rule. Root (id 0) bypasses every
// rule; an unknown user passes none.
func (m *Machine) allowed(userID uint32, rule func(*Permissions) bool) bool {
	if userID == RootUserID {
		return true
	}
	u := m.users[userID]
	if u == nil {
		return false
	}
	return rule(u.Permissions)
}

// BootstrapRoot returns the operation body of the first boot's root user
// creation: a CreateUser issued by the system under RootUserID before any
// user exists, so the root user receives id 0. Apply it with operation
// OperationCreateUser.
func BootstrapRoot(username, passwordHash string, permissions *Permissions) []byte {
	return EncodeOp(Envelope{UserID: RootUserID}, &CreateUser{
		Username:     username,
		PasswordHash: passwordHash,
		Status:       UserStatusActive,
		Permissions:  permissions,
	})
}
