package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zeebo/blake3"
	"go.uber.org/zap"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"

	"github.com/stratabroker/strata/server/metadata"
)

// Stored password hashes are PHC strings, so each names its own scheme and
// parameters: "$argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<key>"
// (base64 without padding) is what the server writes, with Iggy's
// parameters (the argon2 crate's defaults); "$2a$", "$2b$" and "$2y$"
// are bcrypt hashes written by earlier versions, which keep verifying.
const (
	argon2Prefix    = "$argon2id$"
	argon2Version   = argon2.Version
	argon2Passes    = 2
	argon2MemoryKiB = 19 * 1024
	argon2Lanes     = 1
	argon2SaltBytes = 16
	argon2KeyBytes  = 32
	// Bounds on the parameters of a stored hash (it comes from disk): a
	// damaged or hostile hash must not make a login allocate without
	// bound or spin.
	argon2MemoryKiBMax = 256 * 1024
	argon2PassesMax    = 16
	argon2LanesMax     = 16
	argon2SaltBytesMax = 64
	argon2KeyBytesMax  = 64
	// bcryptPasswordBytesMax is the longest password bcrypt reads; longer
	// ones were pre-hashed (passwordKey).
	bcryptPasswordBytesMax = 72
)

// passwordHashesConcurrentMax bounds the password hashes computed at once
// (every login, user creation and password change computes one): each
// Argon2id hash holds argon2MemoryKiB of memory while it runs, so logins
// flooding in cannot take more than this many times that.
var passwordHashesConcurrentMax = max(runtime.NumCPU(), 2)

// passwordHashSlots is the semaphore passwordHashesConcurrentMax sizes.
var passwordHashSlots = make(chan struct{}, passwordHashesConcurrentMax)

// unknownUserHash is what a login for a name that has no user (or no
// password) is verified against: a hash with the parameters of every
// hash the server writes, that no password matches in practice, so an
// unknown name costs the same work as a wrong password.
var unknownUserHash = encodeArgon2(argon2Params{version: argon2Version, memoryKiB: argon2MemoryKiB,
	passes: argon2Passes, lanes: argon2Lanes}, make([]byte, argon2SaltBytes), make([]byte, argon2KeyBytes))

// argon2Params are the parameters of one Argon2id hash.
type argon2Params struct {
	version   int
	memoryKiB uint32
	passes    uint32
	lanes     uint8
}

// HashPassword returns the stored form of a password: Argon2id with a
// fresh random salt, as a PHC string.
func HashPassword(password string) (string, error) {
	salt := make([]byte, argon2SaltBytes)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: salt: %w", err)
	}
	p := argon2Params{version: argon2Version, memoryKiB: argon2MemoryKiB, passes: argon2Passes, lanes: argon2Lanes}
	return encodeArgon2(p, salt, argon2Key(p, password, salt, argon2KeyBytes)), nil
}

// CheckPassword reports whether password matches the stored hash. A hash
// of no known scheme, or a damaged one, matches nothing, after the same
// work as a real check.
func CheckPassword(hash, password string) bool {
	switch {
	case strings.HasPrefix(hash, argon2Prefix):
		p, salt, key, ok := decodeArgon2(hash)
		if !ok {
			break
		}
		return subtle.ConstantTimeCompare(argon2Key(p, password, salt, uint32(len(key))), key) == 1
	case strings.HasPrefix(hash, "$2a$"), strings.HasPrefix(hash, "$2b$"), strings.HasPrefix(hash, "$2y$"):
		passwordHashSlots <- struct{}{}
		defer func() { <-passwordHashSlots }()
		return bcrypt.CompareHashAndPassword([]byte(hash), bcryptPasswordKey(password)) == nil
	}
	CheckPassword(unknownUserHash, password)
	return false
}

// argon2Key derives the key of password under p, holding one of the hash
// slots while it runs.
func argon2Key(p argon2Params, password string, salt []byte, keyBytes uint32) []byte {
	passwordHashSlots <- struct{}{}
	defer func() { <-passwordHashSlots }()
	return argon2.IDKey([]byte(password), salt, p.passes, p.memoryKiB, p.lanes, keyBytes)
}

// encodeArgon2 formats a hash as a PHC string.
func encodeArgon2(p argon2Params, salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("%sv=%d$m=%d,t=%d,p=%d$%s$%s", argon2Prefix, p.version, p.memoryKiB, p.passes, p.lanes,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// decodeArgon2 parses a PHC Argon2id string, refusing parameters outside
// the bounds.
func decodeArgon2(hash string) (argon2Params, []byte, []byte, bool) {
	var p argon2Params
	rest, ok := strings.CutPrefix(hash, argon2Prefix)
	fields := strings.Split(rest, "$")
	if !ok || len(fields) != 4 {
		return p, nil, nil, false
	}
	version, ok := strings.CutPrefix(fields[0], "v=")
	if !ok || version != strconv.Itoa(argon2Version) {
		return p, nil, nil, false
	}
	p.version = argon2Version
	params := strings.Split(fields[1], ",")
	if len(params) != 3 {
		return p, nil, nil, false
	}
	m, okM := phcParam(params[0], "m=", argon2MemoryKiBMax)
	t, okT := phcParam(params[1], "t=", argon2PassesMax)
	l, okL := phcParam(params[2], "p=", argon2LanesMax)
	if !okM || !okT || !okL || t < 1 || l < 1 || m < 8*l {
		return p, nil, nil, false
	}
	p.memoryKiB, p.passes, p.lanes = m, t, uint8(l)
	b64 := base64.RawStdEncoding
	salt, errSalt := b64.DecodeString(fields[2])
	key, errKey := b64.DecodeString(fields[3])
	if errSalt != nil || errKey != nil || len(salt) < 8 || len(salt) > argon2SaltBytesMax ||
		len(key) < 16 || len(key) > argon2KeyBytesMax {
		return p, nil, nil, false
	}
	return p, salt, key, true
}

// phcParam reads "name=value" as a number no larger than limit.
func phcParam(field, name string, limit uint32) (uint32, bool) {
	text, ok := strings.CutPrefix(field, name)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(text, 10, 32)
	if err != nil || n > uint64(limit) {
		return 0, false
	}
	return uint32(n), true
}

// bcryptPasswordKey maps a password to the bytes the bcrypt hashes of
// earlier versions were computed over: bcrypt reads at most 72 bytes, so
// longer passwords were pre-hashed so that every byte counted.
func bcryptPasswordKey(password string) []byte {
	if len(password) <= bcryptPasswordBytesMax {
		return []byte(password)
	}
	sum := blake3.Sum256([]byte(password))
	return []byte(hex.EncodeToString(sum[:]))
}

// verifyPassword checks password against a user's stored hash, or, for a
// login that names no user (hash empty), against unknownUserHash: either
// way one hash is computed, so the answer's timing does not tell whether
// the user exists. Every check is counted in
// strata_password_verifications_total.
func (s *Server) verifyPassword(hash, password string) bool {
	s.passwordVerifications.Inc()
	if hash == "" {
		CheckPassword(unknownUserHash, password)
		return false
	}
	return CheckPassword(hash, password)
}

// isLegacyPasswordHash reports whether a stored hash is of a scheme the
// server no longer writes (bcrypt).
func isLegacyPasswordHash(hash string) bool {
	return strings.HasPrefix(hash, "$2")
}

// upgradePasswordHash stores userID's password, just verified against a
// legacy (bcrypt) hash, as Argon2id: so every user moves to the scheme the
// server writes at their next login, and a login's work no longer tells a
// user of an old data directory from an unknown name. The change commits
// only if the stored hash is still the one verified; a failure is logged
// and the login goes on. Called without the metadata lock.
func (s *Server) upgradePasswordHash(userID uint32, password string) {
	user := s.meta.snapshot().User(metadata.NumericID(userID))
	if user == nil || !isLegacyPasswordHash(user.PasswordHash) {
		return
	}
	hash, err := HashPassword(password)
	if err != nil {
		s.log.Warn("password hash not upgraded", zap.Uint32("user_id", userID), zap.Error(err))
		return
	}
	op := &metadata.ChangePassword{User: metadata.NumericID(userID), VerifiedHash: user.PasswordHash, NewPasswordHash: hash}
	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	_, reply, err := s.meta.submitLocked(metadata.OperationChangePassword, metadata.EncodeOp(metadata.Envelope{UserID: userID}, op))
	if code, _ := metadata.ReplyCode(reply); err != nil || code != metadata.CodeOK {
		// A concurrent login or password change got there first (code
		// 42), or the journal refused the write.
		s.log.Info("password hash not upgraded", zap.Uint32("user_id", userID), zap.Uint32("code", uint32(code)), zap.Error(err))
		return
	}
	s.log.Info("password hash upgraded from bcrypt to argon2id", zap.Uint32("user_id", userID))
}

// registerLoginMetrics creates the login collectors.
func (s *Server) registerLoginMetrics() {
	s.passwordVerifications = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "strata_password_verifications_total",
		Help: "Password hashes computed to check logins and password changes (an unknown user costs one too).",
	})
	s.metrics.registry.MustRegister(s.passwordVerifications)
}
