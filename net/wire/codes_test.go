package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

func TestProtocolVersionBytes(t *testing.T) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], ProtocolVersion)
	if b != [4]byte{0x00, 0x2C, 0x00, 0x00} || ProtocolVersion != 11264 {
		t.Fatalf("packed 0.11.0 = %d % x", ProtocolVersion, b)
	}
	if PackVersion(0, 11, 0) != 11264 || ProtocolVersionMin != 11264 {
		t.Fatalf("PackVersion/min wrong")
	}
	maj, min, patch := UnpackVersion(PackVersion(3, 1023, 7))
	if maj != 3 || min != 1023 || patch != 7 {
		t.Fatalf("unpack %d.%d.%d", maj, min, patch)
	}
	cases := []struct {
		v  uint32
		ok bool
	}{
		{PackVersion(0, 11, 0), true}, {PackVersion(0, 11, 9), true}, {PackVersion(0, 11, 1023), true},
		{PackVersion(0, 10, 5), false}, {PackVersion(0, 12, 0), false}, {PackVersion(1, 11, 0), false}, {0, false},
	}
	for _, c := range cases {
		if AcceptsProtocolVersion(c.v) != c.ok {
			t.Errorf("AcceptsProtocolVersion(%d) = %v", c.v, !c.ok)
		}
	}
}

func TestCodeTable(t *testing.T) {
	codes := Codes()
	if len(codes) != 51 {
		t.Fatalf("%d codes, want 51", len(codes))
	}
	for i := 1; i < len(codes); i++ {
		if codes[i] <= codes[i-1] {
			t.Fatalf("code table not ascending at %d", codes[i])
		}
	}
	for _, c := range codes {
		info, _ := LookupCode(c)
		if !info.Operation.Defined() || info.Operation == OpReserved {
			t.Errorf("%v: bad operation %v", c, info.Operation)
		}
		if info.Operation == OpNonReplicated != c.IsNonReplicated() {
			t.Errorf("%v: IsNonReplicated mismatch", c)
		}
		if info.Operation.IsMetadata() && info.Numbering != NumberNext {
			t.Errorf("%v: metadata op must use next numbering", c)
		}
		if info.Operation.IsPartition() && info.Numbering != NumberCurrent {
			t.Errorf("%v: partition op must use current numbering", c)
		}
		if info.Operation != OpNonReplicated && info.Operation != OpRegister {
			if back, ok := CodeForOperation(info.Operation); !ok || back != c {
				t.Errorf("CodeForOperation(%v) = %v", info.Operation, back)
			}
		}
	}
	want := map[Code][2]Operation{
		CodeCreateTopic:       {132, 64},
		CodeCreatePartitions:  {136, 65},
		CodeDeleteSegments:    {138, 68},
		CodeCreateStream:      {128, 128},
		CodeSendMessages:      {160, 160},
		CodePing:              {2, 2},
		CodeLoginRegister:     {1, 1},
		CodeLogoutUser:        {3, 3},
		CodeSyncConsumerGroup: {2, 2},
	}
	for c, ops := range want {
		op, _ := OperationForCode(c)
		reply, _ := ReplyOperationForCode(c)
		if op != ops[0] || reply != ops[1] {
			t.Errorf("%v: op %d reply %d, want %v", c, op, reply, ops)
		}
		if ResultReplyOperation(op) != reply && op != OpNonReplicated {
			t.Errorf("%v: ResultReplyOperation disagrees", c)
		}
	}
	if _, ok := LookupCode(999); ok || Code(999).String() != "Code(999)" {
		t.Fatal("unknown code found")
	}
	if CodeCreateStream.String() != "CreateStream" {
		t.Fatal(CodeCreateStream.String())
	}
}

func TestOperationClasses(t *testing.T) {
	defined := 0
	framed := map[Operation]bool{}
	for i := 0; i < 256; i++ {
		op := Operation(i)
		if op.Defined() {
			defined++
		}
		if op.IsResultFramed() {
			framed[op] = true
		}
	}
	if defined != 4+5+22+3 {
		t.Fatalf("%d defined operations", defined)
	}
	for op := Operation(128); op <= 149; op++ {
		if framed[op] != (op != 138) {
			t.Errorf("result framing of %v", op)
		}
	}
	for _, op := range []Operation{64, 65, 66, 67, 68, 161, 162, 1} {
		if !framed[op] {
			t.Errorf("%v should be result-framed", op)
		}
	}
	for _, op := range []Operation{2, 3, 160, 138, 0} {
		if framed[op] {
			t.Errorf("%v should not be result-framed", op)
		}
	}
	if OpDeleteSegments.String() != "DeleteSegments" || Operation(200).String() != "Operation(200)" {
		t.Fatal("operation names")
	}
}

func TestErrorCodes(t *testing.T) {
	if len(errorCodeNames) != 238 {
		t.Fatalf("%d error codes, want 238", len(errorCodeNames))
	}
	for i := 1; i < len(errorCodeNames); i++ {
		if errorCodeNames[i].code <= errorCodeNames[i-1].code {
			t.Fatalf("error table not ascending at %d", errorCodeNames[i].code)
		}
	}
	for _, e := range errorCodeNames {
		if e.code.String() != e.name {
			t.Fatalf("%d: %q != %q", uint32(e.code), e.code.String(), e.name)
		}
	}
	if ErrStreamIdNotFound != 1009 || ErrStreamIdNotFound.String() != "StreamIdNotFound" {
		t.Fatal("1009")
	}
	if ErrIncompatibleProtocolVersion != 14003 || ErrorCode(17).Known() || ErrorCode(17).String() != "ErrorCode(17)" {
		t.Fatal("14003 / unknown")
	}
	var err error = fmt.Errorf("create: %w", ErrTopicIdNotFound)
	if !errors.Is(err, ErrTopicIdNotFound) || errors.Is(err, ErrStreamIdNotFound) {
		t.Fatal("errors.Is on ErrorCode")
	}
	if CodeOf(err) != 2010 || CodeOf(fmt.Errorf("x: %w", ErrTruncated)) != ErrInvalidCommand || CodeOf(nil) != 0 {
		t.Fatal("CodeOf")
	}
	if ErrTopicIdNotFound.Error() != "iggy error 2010 TopicIdNotFound" {
		t.Fatal(ErrTopicIdNotFound.Error())
	}
}

func TestEvictionMapping(t *testing.T) {
	want := map[EvictionReason]ErrorCode{
		1: 40, 2: 3, 3: 3, 4: 3, 5: 3, 6: 3, 7: 40, 8: 40, 9: 42, 10: 53, 11: 40, 12: 40, 13: 30, 14: 14003, 15: 4, 16: 3, 200: 3,
	}
	for r, code := range want {
		if got := r.SDKError(11264, 11264); got != code {
			t.Errorf("reason %v → %v, want %v", r, got, code)
		}
	}
	if EvictIncompatibleProtocol.SDKError(11264, 0) != ErrUnauthenticated ||
		EvictIncompatibleProtocol.SDKError(100, 11264) != ErrUnauthenticated {
		t.Fatal("malformed window must map to Unauthenticated")
	}
	if EvictReserved.Defined() || !EvictMalformedLogin.Defined() || EvictionReason(16).Defined() {
		t.Fatal("Defined")
	}
	if EvictStaleClient.String() != "StaleClient" {
		t.Fatal(EvictStaleClient.String())
	}
}
