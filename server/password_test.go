package server

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestPasswordHashes(t *testing.T) {
	hash, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("stored hash %q is not Argon2id with Iggy's parameters", hash)
	}
	again, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if again == hash {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	if !CheckPassword(hash, "correct horse") || CheckPassword(hash, "correct horsE") {
		t.Fatal("argon2id check")
	}
	if CheckPassword(unknownUserHash, "") || CheckPassword(unknownUserHash, "password") {
		t.Fatal("the unknown-user hash matched")
	}
	// bcrypt hashes written by earlier versions, long passwords pre-hashed.
	long := strings.Repeat("x", 80)
	for _, pw := range []string{"old-password", long} {
		legacy, err := bcrypt.GenerateFromPassword(bcryptPasswordKey(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		if !CheckPassword(string(legacy), pw) || CheckPassword(string(legacy), pw+"!") || !isLegacyPasswordHash(string(legacy)) {
			t.Fatalf("bcrypt hash of a %d-byte password", len(pw))
		}
	}
	// Damaged or out-of-bounds hashes match nothing (and allocate nothing
	// their parameters ask for).
	key := hash[strings.LastIndex(hash, "$"):]
	salt := "$c2FsdHNhbHRzYWx0c2FsdA"
	for _, bad := range []string{
		"", "plain", "$argon2id$", "$argon2id$v=19$m=19456,t=2,p=1$",
		"$argon2id$v=16$m=19456,t=2,p=1" + salt + key,
		"$argon2id$v=19$m=4194304,t=2,p=1" + salt + key,
		"$argon2id$v=19$m=19456,t=99,p=1" + salt + key,
		"$argon2id$v=19$m=19456,t=0,p=1" + salt + key,
		"$argon2id$v=19$m=19456,t=2,p=0" + salt + key,
		"$argon2id$v=19$m=19456,t=2,p=1$!!" + key,
		"$argon2id$v=19$m=19456,t=2,p=1" + salt + "$AAAA",
		"$argon2i$v=19$m=19456,t=2,p=1" + salt + key,
		"$2a$10$short",
	} {
		if CheckPassword(bad, "correct horse") {
			t.Fatalf("damaged hash %q matched", bad)
		}
	}
}

// FuzzDecodeArgon2: any stored text decodes or is refused, never panics,
// and what decodes is within the bounds.
func FuzzDecodeArgon2(f *testing.F) {
	f.Add(unknownUserHash)
	f.Add("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5")
	f.Add("$argon2id$v=19$m=,t=,p=$$")
	f.Fuzz(func(t *testing.T, hash string) {
		p, salt, key, ok := decodeArgon2(hash)
		if !ok {
			return
		}
		if p.memoryKiB > argon2MemoryKiBMax || p.passes > argon2PassesMax || p.passes < 1 || p.lanes < 1 ||
			len(salt) > argon2SaltBytesMax || len(key) > argon2KeyBytesMax {
			t.Fatalf("%q decoded out of bounds: %+v, %d-byte salt, %d-byte key", hash, p, len(salt), len(key))
		}
	})
}
