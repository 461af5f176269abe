package server

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/zeebo/blake3"
	"golang.org/x/crypto/bcrypt"
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
	// passwordHashCost is bcrypt's work factor for stored passwords.
	passwordHashCost = 10
	// randomPasswordBytes is the entropy of a generated root password.
	randomPasswordBytes = 18
)

// HashPassword returns the bcrypt hash stored for a password. bcrypt reads
// at most 72 bytes; longer passwords are pre-hashed so that every byte
// counts.
func HashPassword(password string) (string, error) {
	hash, err := bcrypt.GenerateFromPassword(passwordKey(password), passwordHashCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(hash), nil
}

// CheckPassword reports whether password matches the stored hash.
func CheckPassword(hash, password string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), passwordKey(password)) == nil
}

// passwordKey maps a password to the bytes bcrypt hashes.
func passwordKey(password string) []byte {
	if len(password) <= 72 {
		return []byte(password)
	}
	sum := blake3.Sum256([]byte(password))
	return []byte(hex.EncodeToString(sum[:]))
}

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
