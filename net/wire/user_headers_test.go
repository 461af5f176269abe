package wire

import (
	"encoding/binary"
	"errors"
	"testing"
)

func headerItem(kind byte, declared uint32, data string) []byte {
	return append(binary.LittleEndian.AppendUint32([]byte{kind}, declared), data...)
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestValidateUserHeaders(t *testing.T) {
	key := headerItem(byte(TLVString), 3, "key")
	u64 := headerItem(byte(TLVUint64), 8, "\x01\x02\x03\x04\x05\x06\x07\x08")
	cases := []struct {
		name  string
		block []byte
		want  error
		code  uint32
	}{
		{"empty", nil, nil, 0},
		{"string pair", cat(key, headerItem(byte(TLVString), 1, "v")), nil, 0},
		{"numeric key and value", cat(headerItem(byte(TLVInt32), 4, "abcd"), u64), nil, 0},
		{"every kind", func() []byte {
			var b []byte
			for k := TLVRaw; k <= tlvKindMax; k++ {
				size := k.FixedSize()
				if size == 0 {
					size = 255
				}
				b = cat(b, key, headerItem(byte(k), uint32(size), string(make([]byte, size))))
			}
			return b
		}(), nil, 0},
		{"kind 0 key", cat(headerItem(0, 1, "k"), u64), ErrUserHeaderKind, 4040},
		{"kind 16 value", cat(key, headerItem(16, 1, "v")), ErrUserHeaderKind, 4040},
		{"zeros", make([]byte, 10), ErrUserHeaderKind, 4040},
		{"key length 0", cat(headerItem(2, 0, ""), u64), ErrUserHeaderKey, 4018},
		{"key length 256", cat(headerItem(1, 256, string(make([]byte, 256))), u64), ErrUserHeaderKey, 4018},
		{"key overruns", headerItem(2, 4, "abc"), ErrUserHeaderKey, 4018},
		{"key header short", []byte{2, 1, 0}, ErrUserHeaderKey, 4018},
		{"uint16 key of 1 byte", cat(headerItem(byte(TLVUint16), 1, "a"), u64), ErrUserHeaderKey, 4018},
		{"key alone", key, ErrUserHeaderValue, 4019},
		{"value length 0", cat(key, headerItem(2, 0, "")), ErrUserHeaderValue, 4019},
		{"value overruns", cat(key, headerItem(2, 9, "v")), ErrUserHeaderValue, 4019},
		{"value header short", cat(key, []byte{2, 1}), ErrUserHeaderValue, 4019},
		{"uint128 value of 8 bytes", cat(key, headerItem(byte(TLVUint128), 8, "12345678")), ErrUserHeaderValue, 4019},
		{"second pair bad", cat(key, u64, key, headerItem(0, 1, "x")), ErrUserHeaderKind, 4040},
		{"third item alone", cat(key, u64, key), ErrUserHeaderValue, 4019},
	}
	for _, c := range cases {
		err := ValidateUserHeaders(c.block)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) || BatchErrorCode(err) != c.code {
			t.Errorf("%s: %v (code %d), want %v (code %d)", c.name, err, BatchErrorCode(err), c.want, c.code)
		}
		// Agrees with the generic strict TLV check on what is valid.
		if _, strict := ValidateTLVStrict(c.block); (strict == nil) != (err == nil) {
			t.Errorf("%s: ValidateTLVStrict %v, ValidateUserHeaders %v", c.name, strict, err)
		}
	}
}

// TestValidateSendBatchChecksUserHeaders: a batch whose frames carry bad
// header TLV is a valid record (ValidateBatch, the storage check, accepts
// it) but is refused for admission with the header's code.
func TestValidateSendBatchChecksUserHeaders(t *testing.T) {
	good := cat(headerItem(2, 1, "k"), headerItem(2, 1, "v"))
	for _, c := range []struct {
		headers []byte
		code    uint32
	}{
		{good, 0},
		{nil, 0},
		{cat(headerItem(0, 1, "k"), headerItem(2, 1, "v")), 4040},
		{headerItem(2, 1, "k"), 4019},
		{cat(headerItem(2, 0, ""), headerItem(2, 1, "v")), 4018},
	} {
		var bb BatchBuilder
		for i, h := range [][]byte{good, c.headers, nil} {
			if err := bb.Add(MessageID{Low: uint64(i)}, []byte("payload"), h, 10); err != nil {
				t.Fatal(err)
			}
		}
		b, err := bb.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateBatch(b, 3); err != nil {
			t.Fatalf("headers %x: ValidateBatch %v", c.headers, err)
		}
		if got := BatchErrorCode(ValidateSendBatch(b, 3)); got != c.code {
			t.Errorf("headers %x: ValidateSendBatch code %d, want %d", c.headers, got, c.code)
		}
	}
	if n := testing.AllocsPerRun(50, func() {
		_ = ValidateUserHeaders(good)
	}); n != 0 {
		t.Fatalf("ValidateUserHeaders allocates %v", n)
	}
}
