package server

import (
	"encoding/binary"
	"errors"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/metadata"
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
// pre-process, then deduplicate and sequence it under the metadata lock.
func (s *Server) handleMetadataWrite(c *connection, h *wire.RequestHeader, body []byte) response {
	_, userID, client, _ := c.binding()
	switch h.Operation {
	case wire.OpCreateConsumerGroup, wire.OpDeleteConsumerGroup, wire.OpJoinConsumerGroup, wire.OpLeaveConsumerGroup:
		// Consumer groups arrive with a later issue.
		return deny(wire.ErrFeatureUnavailable)
	}
	p := s.prepareMetadata(h.Operation, body, userID)
	if p.status != wire.ErrorCodeOK {
		return deny(p.status)
	}
	env := metadata.Envelope{UserID: userID, ClientLo: client.Lo, ClientHi: client.Hi, Request: h.Request}
	encoded := metadata.EncodeOp(env, p.op)
	replyOperation := wire.ResultReplyOperation(h.Operation)

	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	entry, ok := s.meta.sessions.lookup(client)
	if !ok {
		return response{evict: wire.EvictNoSession}
	}
	if cached, ok := entry.cached(h.Request); ok {
		if !cached.checksum.IsZero() && !h.RequestChecksum.IsZero() && cached.checksum != h.RequestChecksum {
			return response{drop: true}
		}
		if h.Operation == wire.OpCreatePersonalAccessToken {
			return response{body: resultCode(wire.ErrPersonalAccessTokenAlreadyExists), operation: replyOperation}
		}
		return response{body: cached.body, operation: cached.operation, op: cached.op, commit: cached.op}
	}
	if h.Request <= entry.watermark {
		return response{body: resultCode(wire.ErrRequestAlreadyApplied), operation: replyOperation}
	}
	op, reply, err := s.meta.submitLocked(uint8(h.Operation), encoded)
	if err != nil {
		return response{body: resultCode(wire.ErrTransientNotCommitted), operation: replyOperation}
	}
	if p.token != "" {
		if code, ok := metadata.ReplyCode(reply); ok && code == metadata.CodeOK {
			reply = tokenReply(p.token)
		}
	}
	entry.commit(cachedReply{request: h.Request, checksum: h.RequestChecksum, operation: replyOperation, body: reply, op: op})
	return response{body: reply, operation: replyOperation, op: op, commit: op}
}

// tokenReply is the success body of CreatePersonalAccessToken: the raw
// token as a WireName.
func tokenReply(token string) []byte {
	b := make([]byte, 0, 5+len(token))
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = append(b, byte(len(token)))
	return append(b, token...)
}

// prepareMetadata decodes a metadata request body into an operation and
// does the non-deterministic work (password hashing, token generation)
// before sequencing.
func (s *Server) prepareMetadata(operation wire.Operation, body []byte, userID uint32) prepared {
	r := reader{buf: body}
	var p prepared
	switch operation {
	case wire.OpCreateStream:
		o := &metadata.CreateStream{Name: r.name()}
		if opts := r.rest(); r.err == nil && len(opts) > 0 {
			return prepared{status: optionsDenial(opts)}
		}
		p.op = o
	case wire.OpUpdateStream:
		o := &metadata.UpdateStream{Stream: r.identifier(), Name: r.name()}
		if opts := r.rest(); r.err == nil && len(opts) > 0 {
			return prepared{status: optionsDenial(opts)}
		}
		p.op = o
	case wire.OpDeleteStream:
		p.op = &metadata.DeleteStream{Stream: r.identifier()}
	case wire.OpPurgeStream:
		p.op = &metadata.PurgeStream{Stream: r.identifier()}
	case wire.OpCreateTopic:
		return s.prepareCreateTopic(body)
	case wire.OpUpdateTopic:
		return s.prepareUpdateTopic(body)
	case wire.OpDeleteTopic:
		p.op = &metadata.DeleteTopic{Stream: r.identifier(), Topic: r.identifier()}
	case wire.OpPurgeTopic:
		p.op = &metadata.PurgeTopic{Stream: r.identifier(), Topic: r.identifier()}
	case wire.OpCreatePartitions, wire.OpDeletePartitions:
		stream, topic, count := r.identifier(), r.identifier(), r.u32()
		if r.done() == nil && (count == 0 || count > partitionsPerRequestMax) {
			return prepared{status: wire.ErrTooManyPartitions}
		}
		if operation == wire.OpCreatePartitions {
			p.op = &metadata.CreatePartitions{Stream: stream, Topic: topic, Count: count}
		} else {
			p.op = &metadata.DeletePartitions{Stream: stream, Topic: topic, Count: count}
		}
	case wire.OpDeleteSegments:
		p.op = &metadata.DeleteSegments{Stream: r.identifier(), Topic: r.identifier(), PartitionID: r.u32(), SegmentsCount: r.u32()}
	case wire.OpCreateUser:
		return s.prepareCreateUser(body)
	case wire.OpUpdateUser:
		o := &metadata.UpdateUser{User: r.identifier()}
		if o.SetUsername = r.u8() == 1; o.SetUsername {
			o.Username = r.name()
		}
		if o.SetStatus = r.u8() == 1; o.SetStatus {
			o.Status = r.u8()
		}
		if opts := r.rest(); r.err == nil && len(opts) > 0 {
			return prepared{status: optionsDenial(opts)}
		}
		p.op = o
	case wire.OpDeleteUser:
		p.op = &metadata.DeleteUser{User: r.identifier()}
	case wire.OpChangePassword:
		return s.prepareChangePassword(body, userID)
	case wire.OpUpdatePermissions:
		o := &metadata.UpdatePermissions{User: r.identifier()}
		o.Permissions = readOptionalPermissions(&r)
		p.op = o
	case wire.OpCreatePersonalAccessToken:
		name, expiry := r.name(), r.u64()
		if r.done() != nil {
			return prepared{status: wire.ErrInvalidCommand}
		}
		s.meta.mu.RLock()
		count := len(s.meta.machine.Tokens(userID))
		s.meta.mu.RUnlock()
		if count >= int(s.cfg.PersonalAccessToken.MaxTokensPerUser) {
			return prepared{status: wire.ErrPersonalAccessTokensLimitReached}
		}
		token, hash, err := NewToken()
		if err != nil {
			return prepared{status: wire.ErrError}
		}
		return prepared{op: &metadata.CreatePersonalAccessToken{Name: name, TokenHash: hash, ExpiryMicros: expiry}, token: token}
	case wire.OpDeletePersonalAccessToken:
		p.op = &metadata.DeletePersonalAccessToken{Name: r.name()}
	default:
		return prepared{status: wire.ErrInvalidCommand}
	}
	if r.done() != nil {
		return prepared{status: wire.ErrInvalidCommand}
	}
	return p
}

// optionsDenial is the denial for an options block sent where none is
// accepted: 4041 for a well-formed block (its keys are unsupported), 3 for
// a malformed one.
func optionsDenial(block []byte) wire.ErrorCode {
	if _, err := wire.ParseOptions(block); err != nil {
		return wire.ErrInvalidCommand
	}
	return wire.ErrUnsupportedOptionKey
}

// prepareCreateUser decodes CreateUser and hashes the password.
func (s *Server) prepareCreateUser(body []byte) prepared {
	r := reader{buf: body}
	username := r.name()
	password := r.shortText()
	status := r.u8()
	permissions := readOptionalPermissions(&r)
	opts := r.rest()
	if r.err != nil {
		return prepared{status: wire.ErrInvalidCommand}
	}
	if len(opts) > 0 {
		return prepared{status: optionsDenial(opts)}
	}
	hash, err := HashPassword(password)
	if err != nil {
		return prepared{status: wire.ErrError}
	}
	return prepared{op: &metadata.CreateUser{Username: username, PasswordHash: hash, Status: status, Permissions: permissions}}
}

// prepareChangePassword verifies the current password against the stored
// hash and hashes the new one.
func (s *Server) prepareChangePassword(body []byte, userID uint32) prepared {
	r := reader{buf: body}
	target := r.identifier()
	current := r.shortText()
	next := r.shortText()
	if r.done() != nil {
		return prepared{status: wire.ErrInvalidCommand}
	}
	o := &metadata.ChangePassword{User: target}
	s.meta.mu.RLock()
	user := s.meta.machine.User(target)
	var storedHash string
	if user != nil {
		storedHash = user.PasswordHash
	}
	s.meta.mu.RUnlock()
	if user != nil && CheckPassword(storedHash, current) {
		o.VerifiedHash = storedHash
	}
	if next != "" {
		hash, err := HashPassword(next)
		if err != nil {
			return prepared{status: wire.ErrError}
		}
		o.NewPasswordHash = hash
	}
	return prepared{op: o}
}

// readOptionalPermissions reads `[flag u8][len u32][Permissions]` (§4.10):
// flag 1 = present, anything else = absent.
func readOptionalPermissions(r *reader) *metadata.Permissions {
	if r.u8() != 1 {
		return nil
	}
	n := r.u32()
	raw := r.take(int(n))
	if r.err != nil {
		return nil
	}
	p, err := metadata.DecodePermissions(raw)
	if err != nil {
		r.err = errors.Join(errMalformed, err)
		return nil
	}
	return p
}
