package server

import (
	"encoding/binary"
	"fmt"
	"net"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/metadata"
)

// handleRegister runs the login flow of §2.3.
func (s *Server) handleRegister(c *connection, h *wire.RequestHeader, body []byte) response {
	login, err := wire.ParseLogin(body)
	if err != nil {
		return response{evict: wire.EvictMalformedLogin}
	}
	if !wire.AcceptsProtocolVersion(login.Version.ProtocolVersion) {
		return response{evict: wire.EvictIncompatibleProtocol}
	}
	// Gateways (the HTTP API) limit failed logins themselves, with their
	// own answer (429); everything else is limited here.
	limited := !c.gateway
	var attempt LoginAttempt
	if limited {
		var ok bool
		if attempt, ok, _ = s.logins.Take(hostOf(c.address), loginUsername(login)); !ok {
			s.log.Warn("login refused: too many failed logins from this address for this user", zap.String("address", c.address))
			return response{evict: wire.EvictInvalidCredentials}
		}
	}
	userID, byPassword, reason := s.authenticate(login)
	if limited {
		if reason == wire.EvictInvalidCredentials {
			s.logins.Fail(attempt)
		} else {
			s.logins.Refund(attempt)
		}
	}
	if reason != 0 {
		s.log.Info("login rejected", zap.String("address", c.address), zap.Stringer("reason", reason))
		return response{evict: reason}
	}
	if bound, boundUser, _, session := c.binding(); bound {
		// Already bound: reply with the existing session, commit nothing.
		return response{body: registerReply(boundUser, session), op: session}
	}
	if c.admit != nil && !c.admit(userID) {
		// The gateway refused this user's login (its own limits); it
		// tells its client why.
		return response{body: resultCode(wire.ErrTransientNotAccepted)}
	}
	if byPassword {
		s.upgradePasswordHash(userID, login.Password.Password)
	}
	// The register is submitted under the metadata lock and its commit
	// awaited without it: concurrent logins share the journal's syncs.
	s.meta.mu.Lock()
	w, session, outcome, err := s.meta.startRegisterLocked(h.Client, userID)
	s.meta.mu.Unlock()
	if w != nil {
		session, outcome, err = s.meta.awaitRegister(w)
	}
	switch outcome {
	case registerOtherUser:
		return response{evict: wire.EvictSessionError}
	case registerTableFull:
		// Full of other users' sessions: none of them is displaced.
		s.log.Warn("login refused: the client table is full", zap.String("address", c.address), zap.Uint32("user_id", userID))
		return response{body: resultCode(wire.ErrTransientNotAccepted)}
	case registerFailed:
		if err != nil {
			s.log.Warn("login not committed", zap.Error(err))
		}
		return response{body: resultCode(wire.ErrTransientNotCommitted)}
	}
	s.meta.mu.Lock()
	s.meta.bindings.bind(h.Client, userID, session, c)
	s.meta.mu.Unlock()
	s.log.Debug("login", zap.String("address", c.address), zap.Uint32("user_id", userID), zap.Uint64("session_id", session),
		zap.Bool("resumed", outcome == registerResumed))
	return response{body: registerReply(userID, session), op: session, commit: session}
}

// authenticate checks a login's credentials: the password shape first,
// then the token shape. It returns the user id and whether the password
// (not a token) proved it, or the eviction reason.
// A well-formed password login computes exactly one password hash whether
// or not its user exists or is active, so neither shows in its timing.
func (s *Server) authenticate(login wire.Login) (uint32, bool, wire.EvictionReason) {
	m := s.meta.snapshot()
	credentialsRejected := false
	if pw := login.Password; pw != nil {
		n, p := len(pw.Username), len(pw.Password)
		if n < usernameLengthMin || n > usernameLengthMax || p < passwordLengthMin || p > passwordLengthMax {
			credentialsRejected = true
		} else {
			user := m.UserByName(pw.Username)
			hash := ""
			if user != nil {
				hash = user.PasswordHash
			}
			if s.verifyPassword(hash, pw.Password) && user.Status == metadata.UserStatusActive {
				return user.ID, true, 0
			}
			credentialsRejected = true
		}
	}
	if tk := login.Token; tk != nil && tk.Token != "" {
		user, token := m.TokenByHash(TokenHash(tk.Token))
		switch {
		case user == nil:
		case token.ExpiryAt != 0 && token.ExpiryAt <= s.nowMicros():
			return 0, false, wire.EvictInvalidToken
		case user.Status != metadata.UserStatusActive:
			return 0, false, wire.EvictUserInactive
		default:
			return user.ID, false, 0
		}
		if !credentialsRejected {
			return 0, false, wire.EvictInvalidToken
		}
	}
	if credentialsRejected {
		return 0, false, wire.EvictInvalidCredentials
	}
	return 0, false, wire.EvictMalformedLogin
}

// loginUsername is the username a login names, empty for a token login:
// the failed-login limiter counts per username.
func loginUsername(login wire.Login) string {
	if login.Password != nil {
		return login.Password.Username
	}
	return ""
}

// hostOf is the host part of a host:port address (the address itself when
// it has no port).
func hostOf(address string) string {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return address
	}
	return host
}

// registerReply is the result-framed Register success body.
func registerReply(userID uint32, session uint64) []byte {
	b := make([]byte, 0, 21+len(wire.ServerVersion))
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, userID)
	b = binary.LittleEndian.AppendUint64(b, session)
	b = binary.LittleEndian.AppendUint32(b, wire.ProtocolVersion)
	b = append(b, byte(len(wire.ServerVersion)))
	return append(b, wire.ServerVersion...)
}

// resultCode is a result section carrying one error code (§4.9).
func resultCode(code wire.ErrorCode) []byte {
	b := make([]byte, 12)
	binary.LittleEndian.PutUint32(b[0:], 1)
	binary.LittleEndian.PutUint32(b[8:], uint32(code))
	return b
}

// handleLogout ends the connection's session (§2.4); an unbound
// connection gets the same empty success.
func (s *Server) handleLogout(c *connection, h *wire.RequestHeader) response {
	bound, _, client, _ := c.binding()
	if !bound {
		return response{}
	}
	// Submitted under the metadata lock, awaited without it (the
	// journal's syncs are shared), then unbound under it.
	s.meta.mu.Lock()
	w, err := s.meta.startLogoutLocked(client)
	s.meta.mu.Unlock()
	var op uint64
	if err == nil && w != nil {
		op, err = s.meta.awaitLogout(w)
	}
	if err != nil {
		return deny(wire.ErrTransientNotCommitted)
	}
	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	s.meta.bindings.unbind(client)
	s.releaseGroupMembershipsLocked(client)
	c.unbind()
	return response{op: op, commit: op}
}

// bootstrapRoot creates the root user on the first boot (no user exists).
func (s *Server) bootstrapRoot(root RootCredentials) error {
	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	if len(s.meta.snapshot().Users()) > 0 {
		if root.Username != "" {
			s.loginHint = "log in as the existing root user (root credentials apply only at the first boot)"
		}
		return nil
	}
	username, password := root.Username, root.Password
	generated := false
	if username == "" {
		username = "iggy"
	}
	if password == "" {
		var err error
		if password, err = RandomPassword(); err != nil {
			return err
		}
		generated = true
	}
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	if _, _, err := s.meta.submitLocked(metadata.OperationCreateUser, metadata.BootstrapRoot(username, hash, rootPermissions())); err != nil {
		return fmt.Errorf("create root user: %w", err)
	}
	if generated {
		s.loginHint = fmt.Sprintf("root user created: username %q, password %q (shown once; set STRATA_ROOT_PASSWORD to choose it)", username, password)
	} else {
		s.loginHint = fmt.Sprintf("root user created: username %q (log in with strata --username %s --password ...)", username, username)
	}
	s.log.Info("root user created", zap.String("username", username), zap.Bool("generated_password", generated))
	return nil
}

// rootPermissions are the root user's displayed permissions: every global
// right (root bypasses every check regardless).
func rootPermissions() *metadata.Permissions {
	return &metadata.Permissions{Global: metadata.GlobalPermissions{
		ManageServers: true, ReadServers: true, ManageUsers: true, ReadUsers: true,
		ManageStreams: true, ReadStreams: true, ManageTopics: true, ReadTopics: true,
		PollMessages: true, SendMessages: true,
	}}
}
