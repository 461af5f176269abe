package server

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/zeebo/blake3"
)

// Limits of credentials, as PROTOCOL.md §2.3 and §9 state them.
const (
	usernameLengthMin = 3
	usernameLengthMax = 50
	passwordLengthMin = 3
	passwordLengthMax = 100
	// tokenRandomBytes is the entropy of a personal access token; encoded
	// as standard base64 with padding it is 68 characters.
	tokenRandomBytes = 50
	// randomPasswordBytes is the entropy of a generated root password.
	randomPasswordBytes = 18
)

// NewToken returns a fresh personal access token and the hash under which
// the server stores it (BLAKE3-256, hex).
func NewToken() (token string, hash string, err error) {
	raw := make([]byte, tokenRandomBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("generate token: %w", err)
	}
	token = base64.StdEncoding.EncodeToString(raw)
	return token, TokenHash(token), nil
}

// TokenHash is the stored form of a personal access token.
func TokenHash(token string) string {
	sum := blake3.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// RandomPassword returns a password for a root user created without one.
func RandomPassword() (string, error) {
	raw := make([]byte, randomPasswordBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}
