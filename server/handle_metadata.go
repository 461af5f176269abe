package server

import (
	"encoding/binary"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/vsr"
)

// Limits of metadata requests checked before sequencing (PROTOCOL.md §5).
const (
	partitionsPerRequestMax = 1000
	personalAccessTokensMax = 100
)

// prepared is a metadata operation ready to sequence, or the denial that
// stops it before commit.
type prepared struct {
	op     metadata.Op
	status wire.ErrorCode
	// token is the raw personal access token of a CreatePersonalAccessToken,
	// returned to the client and never stored.
	token string
}

// handleMetadataWrite runs a metadata operation (128..149): decode and
// pre-process, then deduplicate and sequence it through the metadata
// group (submitted under the metadata lock, its commit awaited without).
func (s *Server) handleMetadataWrite(c *connection, h *wire.RequestHeader, body []byte) response {
	_, userID, client, session := c.binding()
	switch h.Operation {
	case wire.OpCreateConsumerGroup, wire.OpDeleteConsumerGroup, wire.OpJoinConsumerGroup, wire.OpLeaveConsumerGroup:
		// Consumer groups (handle_groups.go).
		return s.handleGroupWrite(c, h, body)
	}
	p := s.prepareMetadata(h.Operation, body, userID)
	if p.status != wire.ErrorCodeOK {
		return deny(p.status)
	}
	env := metadata.Envelope{UserID: userID, ClientLo: client.Lo, ClientHi: client.Hi, Request: h.Request}
	encoded := metadata.EncodeOp(env, p.op)

	// Submitted under the metadata lock, its commit awaited without it:
	// concurrent metadata operations share the journal's syncs.
	s.meta.mu.Lock()
	w, err := s.startSequenceLocked(h, client, session, encoded, nil)
	s.meta.mu.Unlock()
	return s.awaitSequence(h, client, w, err, func(reply []byte) []byte {
		if p.token == "" {
			return reply
		}
		return tokenReply(p.token)
	})
}

// sequenceLocked runs the client-table checks of PROTOCOL.md §1.9 for one
// metadata request (session, duplicate, watermark) and sequences its
// encoded operation. prepare, when set, runs just before sequencing, on
// the state the operation applies to; onSuccess may rewrite the reply of
// a committed success before it is cached. The caller holds the metadata
// lock for writing, across the commit.
func (s *Server) sequenceLocked(h *wire.RequestHeader, client wire.Uint128, session uint64, encoded []byte, prepare func(), onSuccess func(reply []byte) []byte) response {
	w, err := s.startSequenceLocked(h, client, session, encoded, prepare)
	return s.awaitSequence(h, client, w, err, onSuccess)
}

// startSequenceLocked submits one metadata request to the group (the
// client table's checks run there) and returns the waiter of its answer.
// The caller holds the metadata lock for writing and may release it
// before awaitSequence.
func (s *Server) startSequenceLocked(h *wire.RequestHeader, client wire.Uint128, session uint64, encoded []byte, prepare func()) (*metaWaiter, error) {
	if prepare != nil {
		prepare()
	}
	return s.meta.startRequestLocked(group.MetaRequest{
		Client: groupClient(client), Session: session, Request: h.Request,
		Tag:       vsr.Uint128{Lo: h.RequestChecksum.Lo, Hi: h.RequestChecksum.Hi},
		Operation: uint8(h.Operation), Body: encoded,
	})
}

// awaitSequence waits for a sequenced request's answer and makes the
// response.
func (s *Server) awaitSequence(h *wire.RequestHeader, client wire.Uint128, w *metaWaiter, err error, onSuccess func(reply []byte) []byte) response {
	replyOperation := wire.ResultReplyOperation(h.Operation)
	var r group.Reply
	if err == nil {
		r, err = s.meta.await(w)
	}
	switch {
	case err != nil:
		return response{body: resultCode(wire.ErrTransientNotCommitted), operation: replyOperation}
	case r.Evicted:
		s.meta.bindings.unbind(client)
		return response{evict: wire.EvictNoSession}
	case r.Disposition == vsr.DispositionTooLarge:
		// Retrying cannot help: the request does not fit a prepare.
		return response{body: resultCode(wire.ErrTooBigMessagePayload), operation: replyOperation}
	case r.Disposition != vsr.DispositionNone:
		// 57, 58 or 59 (group.Code): in flight, overloaded, already applied.
		return response{body: resultCode(r.Code), operation: replyOperation}
	case r.Replayed:
		tag := wire.Uint128{Lo: r.Tag.Lo, Hi: r.Tag.Hi}
		if !tag.IsZero() && !h.RequestChecksum.IsZero() && tag != h.RequestChecksum {
			// The request number of another request: dropped.
			return response{drop: true}
		}
		if h.Operation == wire.OpCreatePersonalAccessToken {
			// The raw token is never stored, so it cannot be replayed.
			return response{body: resultCode(wire.ErrPersonalAccessTokenAlreadyExists), operation: replyOperation}
		}
		return response{body: r.Body, operation: replyOperation, op: r.Op, commit: r.Op}
	}
	reply := r.Body
	if code, ok := metadata.ReplyCode(reply); ok && code == metadata.CodeOK && onSuccess != nil {
		reply = onSuccess(reply)
	}
	return response{body: reply, operation: replyOperation, op: r.Op, commit: r.Op}
}

// tokenReply is the success body of CreatePersonalAccessToken: the raw
// token as a WireName.
func tokenReply(token string) []byte {
	b := make([]byte, 0, 5+len(token))
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = append(b, byte(len(token)))
	return append(b, token...)
}

// metaID maps a protocol identifier to the metadata machine's.
func metaID(id wire.Identifier) metadata.Identifier {
	if id.IsNumeric() {
		return metadata.NumericID(id.Numeric)
	}
	return metadata.NamedID(id.Name)
}

// prepareMetadata decodes a metadata request body into an operation and
// does the non-deterministic work (password hashing, token generation)
// before sequencing.
func (s *Server) prepareMetadata(operation wire.Operation, body []byte, userID uint32) prepared {
	code, ok := wire.CodeForOperation(operation)
	if !ok {
		return prepared{status: wire.ErrInvalidCommand}
	}
	req, ok := wire.NewRequest(code)
	if !ok {
		return prepared{status: wire.ErrInvalidCommand}
	}
	if err := req.Decode(body); err != nil {
		return prepared{status: decodeDenial(err)}
	}
	switch r := req.(type) {
	case *wire.CreateStreamRequest:
		if len(r.Options) > 0 {
			return prepared{status: wire.ErrUnsupportedOptionKey}
		}
		return prepared{op: &metadata.CreateStream{Name: r.Name}}
	case *wire.UpdateStreamRequest:
		if len(r.Options) > 0 {
			return prepared{status: wire.ErrUnsupportedOptionKey}
		}
		return prepared{op: &metadata.UpdateStream{Stream: metaID(r.StreamID), Name: r.Name}}
	case *wire.DeleteStreamRequest:
		return prepared{op: &metadata.DeleteStream{Stream: metaID(r.StreamID)}}
	case *wire.PurgeStreamRequest:
		return prepared{op: &metadata.PurgeStream{Stream: metaID(r.StreamID)}}
	case *wire.CreateTopicRequest:
		return s.prepareCreateTopic(r)
	case *wire.UpdateTopicRequest:
		return s.prepareUpdateTopic(r)
	case *wire.DeleteTopicRequest:
		return prepared{op: &metadata.DeleteTopic{Stream: metaID(r.StreamID), Topic: metaID(r.TopicID)}}
	case *wire.PurgeTopicRequest:
		return prepared{op: &metadata.PurgeTopic{Stream: metaID(r.StreamID), Topic: metaID(r.TopicID)}}
	case *wire.CreatePartitionsRequest:
		if r.PartitionsCount == 0 || r.PartitionsCount > partitionsPerRequestMax {
			return prepared{status: wire.ErrTooManyPartitions}
		}
		return prepared{op: &metadata.CreatePartitions{Stream: metaID(r.StreamID), Topic: metaID(r.TopicID), Count: r.PartitionsCount}}
	case *wire.DeletePartitionsRequest:
		if r.PartitionsCount == 0 || r.PartitionsCount > partitionsPerRequestMax {
			return prepared{status: wire.ErrTooManyPartitions}
		}
		return prepared{op: &metadata.DeletePartitions{Stream: metaID(r.StreamID), Topic: metaID(r.TopicID), Count: r.PartitionsCount}}
	case *wire.DeleteSegmentsRequest:
		return prepared{op: &metadata.DeleteSegments{Stream: metaID(r.StreamID), Topic: metaID(r.TopicID), PartitionID: r.PartitionID, SegmentsCount: r.SegmentsCount}}
	case *wire.CreateUserRequest:
		return s.prepareCreateUser(r)
	case *wire.UpdateUserRequest:
		if len(r.Options) > 0 {
			return prepared{status: wire.ErrUnsupportedOptionKey}
		}
		o := &metadata.UpdateUser{User: metaID(r.UserID)}
		if r.Username != nil {
			o.SetUsername, o.Username = true, *r.Username
		}
		if r.Status != nil {
			o.SetStatus, o.Status = true, uint8(*r.Status)
		}
		return prepared{op: o}
	case *wire.DeleteUserRequest:
		return prepared{op: &metadata.DeleteUser{User: metaID(r.UserID)}}
	case *wire.ChangePasswordRequest:
		return s.prepareChangePassword(r)
	case *wire.UpdatePermissionsRequest:
		return prepared{op: &metadata.UpdatePermissions{User: metaID(r.UserID), Permissions: metadata.PermissionsFromWire(r.Permissions)}}
	case *wire.CreatePersonalAccessTokenRequest:
		return s.prepareCreateToken(r, userID)
	case *wire.DeletePersonalAccessTokenRequest:
		return prepared{op: &metadata.DeletePersonalAccessToken{Name: r.Name}}
	}
	return prepared{status: wire.ErrInvalidCommand}
}

// decodeDenial is the status for an undecodable request: the error code
// the decoder named (options problems: 4041, 4042, 4043), else 3.
func decodeDenial(err error) wire.ErrorCode {
	return wire.CodeOf(err)
}

// prepareCreateToken checks the token limit and generates the token; only
// its hash enters the operation.
func (s *Server) prepareCreateToken(r *wire.CreatePersonalAccessTokenRequest, userID uint32) prepared {
	s.meta.mu.RLock()
	count := len(s.meta.snapshot().Tokens(userID))
	s.meta.mu.RUnlock()
	if count >= int(s.cfg.PersonalAccessToken.MaxTokensPerUser) {
		return prepared{status: wire.ErrPersonalAccessTokensLimitReached}
	}
	token, hash, err := NewToken()
	if err != nil {
		return prepared{status: wire.ErrError}
	}
	return prepared{op: &metadata.CreatePersonalAccessToken{Name: r.Name, TokenHash: hash, ExpiryMicros: r.Expiry}, token: token}
}

// prepareCreateUser hashes the password of a CreateUser.
func (s *Server) prepareCreateUser(r *wire.CreateUserRequest) prepared {
	if len(r.Options) > 0 {
		return prepared{status: wire.ErrUnsupportedOptionKey}
	}
	perms := metadata.PermissionsFromWire(r.Permissions)
	hash, err := HashPassword(r.Password)
	if err != nil {
		return prepared{status: wire.ErrError}
	}
	return prepared{op: &metadata.CreateUser{Username: r.Username, PasswordHash: hash, Status: uint8(r.Status), Permissions: perms}}
}

// prepareChangePassword verifies the current password against the stored
// hash and hashes the new one.
func (s *Server) prepareChangePassword(r *wire.ChangePasswordRequest) prepared {
	o := &metadata.ChangePassword{User: metaID(r.UserID)}
	s.meta.mu.RLock()
	user := s.meta.snapshot().User(o.User)
	var storedHash string
	if user != nil {
		storedHash = user.PasswordHash
	}
	s.meta.mu.RUnlock()
	// An unknown user costs one hash too (verifyPassword).
	if s.verifyPassword(storedHash, r.CurrentPassword) && user != nil {
		o.VerifiedHash = storedHash
	}
	if r.NewPassword != "" {
		hash, err := HashPassword(r.NewPassword)
		if err != nil {
			return prepared{status: wire.ErrError}
		}
		o.NewPasswordHash = hash
	}
	return prepared{op: o}
}
