package server_test

// These tests speak the protocol with bytes assembled by hand from the
// layouts of PROTOCOL.md (sections 1.3, 1.4, 2.3, 4.9, 5, 6), without
// net/wire: they check that the server is byte-compatible with a client
// written from the documentation alone.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
)

// rawConn is a protocol client built from the documentation.
type rawConn struct {
	t       *testing.T
	conn    net.Conn
	client  [16]byte
	session uint64
	counter uint64
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := &rawConn{t: t, conn: conn, counter: 1}
	r.client[0] = 0x5A // any non-zero id
	r.client[15] = 0x01
	return r
}

// requestFrame assembles a Request frame (§1.3): command 5 @60, size @48,
// client @128, request checksum @144, request @168, operation @176,
// session @184, NonReplicated code @196.
func (r *rawConn) requestFrame(operation byte, code uint32, request, session uint64, checksum bool, body []byte) []byte {
	f := make([]byte, 256+len(body))
	binary.LittleEndian.PutUint32(f[48:], uint32(len(f)))
	f[60] = 5
	copy(f[128:144], r.client[:])
	if checksum {
		binary.LittleEndian.PutUint64(f[144:], xxh3.Hash(body))
	}
	binary.LittleEndian.PutUint64(f[168:], request)
	f[176] = operation
	binary.LittleEndian.PutUint64(f[184:], session)
	if operation == 2 {
		binary.LittleEndian.PutUint32(f[196:], code)
	}
	copy(f[256:], body)
	return f
}

// rawReply is a decoded Reply (§1.4) or Eviction (§1.5) frame.
type rawReply struct {
	command   byte
	request   uint64
	operation byte
	status    uint32
	reason    byte
	body      []byte
}

func (r *rawConn) roundTrip(frame []byte) rawReply {
	r.t.Helper()
	if _, err := r.conn.Write(frame); err != nil {
		r.t.Fatal(err)
	}
	return r.read()
}

func (r *rawConn) read() rawReply {
	r.t.Helper()
	_ = r.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	h := make([]byte, 256)
	if _, err := io.ReadFull(r.conn, h); err != nil {
		r.t.Fatalf("read reply header: %v", err)
	}
	size := binary.LittleEndian.Uint32(h[48:])
	body := make([]byte, size-256)
	if _, err := io.ReadFull(r.conn, body); err != nil {
		r.t.Fatalf("read reply body: %v", err)
	}
	return rawReply{command: h[60], request: binary.LittleEndian.Uint64(h[200:]), operation: h[208],
		status: binary.LittleEndian.Uint32(h[216:]), reason: h[255], body: body}
}

// metadataOp sends a metadata operation with the next request number and
// returns the result section's payload, failing on a rejection.
func (r *rawConn) metadataOp(operation byte, body []byte) (payload []byte, result uint32) {
	r.t.Helper()
	reply := r.roundTrip(r.requestFrame(operation, 0, r.counter, r.session, true, body))
	r.counter++
	if reply.command != 8 || reply.status != 0 {
		r.t.Fatalf("operation %d: command %d status %d", operation, reply.command, reply.status)
	}
	count := binary.LittleEndian.Uint32(reply.body)
	if count == 1 {
		return nil, binary.LittleEndian.Uint32(reply.body[8:])
	}
	return reply.body[4:], 0
}

// loginBody is the Register body of §2.3: version prefix + username and
// password + empty context.
func loginBody(username, password string) []byte {
	b := []byte{0x00, 0x2C, 0x00, 0x00} // packed 0.11.0
	b = append(b, 6)
	b = append(b, "go-sdk"...)
	b = append(b, 12)
	b = append(b, "0.9.0-edge.4"...)
	b = append(b, byte(len(username)))
	b = append(b, username...)
	b = append(b, byte(len(password)))
	b = append(b, password...)
	return append(b, 0, 0, 0, 0)
}

func (r *rawConn) login() {
	r.t.Helper()
	reply := r.roundTrip(r.requestFrame(1, 0, 0, 0, true, loginBody("iggy", "iggy")))
	if reply.command != 8 || reply.status != 0 || reply.operation != 1 {
		r.t.Fatalf("login: command %d status %d operation %d reason %d", reply.command, reply.status, reply.operation, reply.reason)
	}
	// [count 0][user_id u32][session u64][protocol u32][version]
	if len(reply.body) < 21 || binary.LittleEndian.Uint32(reply.body) != 0 {
		r.t.Fatalf("register reply body % x", reply.body)
	}
	if binary.LittleEndian.Uint32(reply.body[16:]) != 11264 {
		r.t.Fatalf("server protocol version %d", binary.LittleEndian.Uint32(reply.body[16:]))
	}
	r.session = binary.LittleEndian.Uint64(reply.body[8:])
	if r.session == 0 {
		r.t.Fatal("session 0")
	}
}

// numericID is an Identifier (§4.2) of kind 1.
func numericID(id uint32) []byte {
	return binary.LittleEndian.AppendUint32([]byte{1, 4}, id)
}

// rawBatch builds a SendMessages batch (§6.1-6.3) of the payloads.
func rawBatch(payloads ...string) []byte {
	var frames []byte
	var frameSums []uint64
	for i, p := range payloads {
		f := make([]byte, 48+len(p))
		binary.LittleEndian.PutUint64(f[8:], uint64(100+i)) // id
		binary.LittleEndian.PutUint32(f[24:], uint32(i))    // offset_delta
		binary.LittleEndian.PutUint32(f[36:], uint32(len(p)))
		copy(f[48:], p)
		sum := xxh3.Hash(f[8:])
		binary.LittleEndian.PutUint64(f[0:], sum)
		frameSums = append(frameSums, sum)
		frames = append(frames, f...)
	}
	h := make([]byte, 256)
	binary.LittleEndian.PutUint64(h[24:], 1_700_000_000_000_000) // origin timestamp
	binary.LittleEndian.PutUint64(h[32:], uint64(256+len(frames)))
	binary.LittleEndian.PutUint32(h[48:], uint32(len(payloads)))
	input := append([]byte{}, h[0:40]...)
	input = append(input, h[48:52]...)
	for _, s := range frameSums {
		input = binary.LittleEndian.AppendUint64(input, s)
	}
	binary.LittleEndian.PutUint64(h[40:], xxh3.Hash(input))
	return append(h, frames...)
}

func TestRawProtocolFromTheDocumentation(t *testing.T) {
	ts := startServer(t, t.TempDir())
	r := dialRaw(t, ts.addr)

	// Ping before login (§2.2): NonReplicated code 1, empty reply.
	if reply := r.roundTrip(r.requestFrame(2, 1, 1, 0, false, nil)); reply.command != 8 || reply.status != 0 || len(reply.body) != 0 || reply.request != 1 {
		t.Fatalf("ping: %+v", reply)
	}
	// A metadata op before login is evicted with NoSession (§2.1).
	if reply := r.roundTrip(r.requestFrame(128, 0, 1, 1, false, []byte{1, 'x'})); reply.command != 13 || reply.reason != 1 {
		t.Fatalf("unbound write: %+v", reply)
	}
	r.login()

	// CreateStream (§5.4): Name, no options; reply StreamDetails.
	payload, result := r.metadataOp(128, []byte{6, 'r', 'a', 'w', '-', 's', '1'})
	if result != 0 || binary.LittleEndian.Uint32(payload) != 0 || payload[32] != 6 || string(payload[33:39]) != "raw-s1" {
		t.Fatalf("create stream: result %d payload % x", result, payload)
	}
	// CreateTopic (§5.5): stream Id, partitions u32, Name, options; reply
	// operation 64 carrying TopicHeader + partitions.
	body := append(numericID(0), binary.LittleEndian.AppendUint32(nil, 2)...)
	body = append(body, 3, 't', 'o', 'p')
	frame := r.requestFrame(132, 0, r.counter, r.session, true, body)
	r.counter++
	reply := r.roundTrip(frame)
	if reply.status != 0 || reply.operation != 64 || binary.LittleEndian.Uint32(reply.body) != 0 {
		t.Fatalf("create topic: %+v", reply)
	}
	if partitions := binary.LittleEndian.Uint32(reply.body[4+12:]); partitions != 2 {
		t.Fatalf("create topic: partitions_count %d", partitions)
	}

	// A duplicate of the last metadata request gets the stored reply and
	// is not applied twice (§1.9).
	again := r.roundTrip(frame)
	if !bytes.Equal(again.body, reply.body) || again.operation != 64 {
		t.Fatalf("duplicate create topic got a different reply: %+v", again)
	}
	// Request 1 again with a different body and checksum: the id was
	// reused for another request, so it is dropped without a reply; the
	// next reply read is the ping's.
	if _, err := r.conn.Write(r.requestFrame(128, 0, 1, r.session, true, []byte{2, 'z', 'z'})); err != nil {
		t.Fatal(err)
	}
	if ping := r.roundTrip(r.requestFrame(2, 1, 77, r.session, false, nil)); ping.request != 77 {
		t.Fatalf("reused request id was answered: reply to request %d", ping.request)
	}
	// Request 1 again without a checksum: the cached CreateStream reply.
	if replay, result := r.metadataOpAt(128, 1, []byte{2, 'z', 'z'}); result != 0 || string(replay[33:39]) != "raw-s1" {
		t.Fatalf("replay of request 1: result %d payload % x", result, replay)
	}
	if streams, err := ts.connect().GetStreams(ctx(t)); err != nil || len(streams) != 1 {
		t.Fatalf("a duplicate was applied twice: %d streams, %v", len(streams), err)
	}

	// SendMessages (§6.4): metadata prefix then the batch.
	meta := append(numericID(0), numericID(0)...)
	meta = append(meta, 2, 4, 1, 0, 0, 0) // partition_id 1
	meta = binary.LittleEndian.AppendUint32(meta, 3)
	send := binary.LittleEndian.AppendUint32(nil, uint32(len(meta)))
	send = append(send, meta...)
	send = append(send, rawBatch("one", "two", "three")...)
	sent := r.roundTrip(r.requestFrame(160, 0, r.counter, r.session, false, send))
	if sent.status != 0 || sent.operation != 160 || len(sent.body) != 24 {
		t.Fatalf("send: %+v", sent)
	}
	if count, partition, base := binary.LittleEndian.Uint32(sent.body), binary.LittleEndian.Uint32(sent.body[12:]), binary.LittleEndian.Uint64(sent.body[16:]); count != 1 || partition != 1 || base != 0 {
		t.Fatalf("send confirmation: count %d partition %d base %d", count, partition, base)
	}

	// A batch with a wrong message checksum is rejected and stores nothing.
	bad := append([]byte{}, send...)
	bad[len(bad)-1] ^= 0xFF
	if rejected := r.roundTrip(r.requestFrame(160, 0, r.counter, r.session, false, bad)); rejected.status != 4027 {
		t.Fatalf("corrupt batch: status %d", rejected.status)
	}

	// PollMessages (§6.6): consumer, stream, topic, partition, strategy
	// first, count 10, no auto-commit.
	poll := append([]byte{1}, numericID(7)...)
	poll = append(poll, numericID(0)...)
	poll = append(poll, numericID(0)...)
	poll = append(poll, 1, 1, 0, 0, 0)
	poll = append(poll, 3, 0, 0, 0, 0, 0, 0, 0, 0)
	poll = binary.LittleEndian.AppendUint32(poll, 10)
	poll = append(poll, 0)
	polled := r.roundTrip(r.requestFrame(2, 100, r.counter, r.session, false, poll))
	if polled.status != 0 {
		t.Fatalf("poll status %d", polled.status)
	}
	b := polled.body
	if partition, current, count := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint64(b[4:]), binary.LittleEndian.Uint32(b[12:]); partition != 1 || current != 2 || count != 3 {
		t.Fatalf("poll head: partition %d current %d count %d", partition, current, count)
	}
	batch := b[16:]
	if baseOffset, length, n := binary.LittleEndian.Uint64(batch[8:]), binary.LittleEndian.Uint64(batch[32:]), binary.LittleEndian.Uint32(batch[48:]); baseOffset != 0 || int(length) != len(batch) || n != 3 {
		t.Fatalf("polled batch: base %d length %d (have %d) count %d", baseOffset, length, len(batch), n)
	}
	var got []string
	for pos := 256; pos < len(batch); {
		payloadLength := int(binary.LittleEndian.Uint32(batch[pos+36:]))
		headersLength := int(binary.LittleEndian.Uint32(batch[pos+32:]))
		got = append(got, string(batch[pos+48:pos+48+payloadLength]))
		pos += 48 + payloadLength + headersLength
	}
	if len(got) != 3 || got[0] != "one" || got[2] != "three" {
		t.Fatalf("polled payloads %q", got)
	}
}

// metadataOpAt sends a metadata operation with an explicit request number.
func (r *rawConn) metadataOpAt(operation byte, request uint64, body []byte) ([]byte, uint32) {
	r.t.Helper()
	reply := r.roundTrip(r.requestFrame(operation, 0, request, r.session, false, body))
	if reply.command != 8 || reply.status != 0 {
		r.t.Fatalf("operation %d: command %d status %d", operation, reply.command, reply.status)
	}
	if binary.LittleEndian.Uint32(reply.body) == 1 {
		return nil, binary.LittleEndian.Uint32(reply.body[8:])
	}
	return reply.body[4:], 0
}

func TestBadFramesDoNotDisturbOtherClients(t *testing.T) {
	ts := startServer(t, t.TempDir())
	healthy := ts.connect()
	if _, err := healthy.CreateStream(ctx(t), "steady"); err != nil {
		t.Fatal(err)
	}

	attacks := map[string]func(r *rawConn) []byte{
		"4 GiB size claim": func(r *rawConn) []byte {
			f := r.requestFrame(2, 1, 1, 0, false, nil)
			binary.LittleEndian.PutUint32(f[48:], 0xFFFFFFFF)
			return f
		},
		"size below the header": func(r *rawConn) []byte {
			f := r.requestFrame(2, 1, 1, 0, false, nil)
			binary.LittleEndian.PutUint32(f[48:], 100)
			return f
		},
		"truncated frame": func(r *rawConn) []byte {
			f := r.requestFrame(2, 1, 1, 0, false, make([]byte, 1000))
			return f[:600]
		},
		"invalid command byte": func(r *rawConn) []byte {
			f := r.requestFrame(2, 1, 1, 0, false, nil)
			f[60] = 200
			return f
		},
	}
	for name, attack := range attacks {
		r := dialRaw(t, ts.addr)
		if _, err := r.conn.Write(attack(r)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "truncated frame" {
			_ = r.conn.(*net.TCPConn).CloseWrite()
		}
		_ = r.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 256)
		if n, err := r.conn.Read(buf); !errors.Is(err, io.EOF) {
			t.Fatalf("%s: server answered %d bytes (%v); want the connection closed", name, n, err)
		}
		if _, err := healthy.GetStreams(ctx(t)); err != nil {
			t.Fatalf("healthy client after %s: %v", name, err)
		}
	}

	// Answered, not closed: unknown code, a read before login, an
	// undefined operation (dropped), a legacy login code.
	r := dialRaw(t, ts.addr)
	if reply := r.roundTrip(r.requestFrame(2, 9999, 1, 0, false, nil)); reply.status != 40 {
		t.Fatalf("unknown code before login: status %d, want 40", reply.status)
	}
	if reply := r.roundTrip(r.requestFrame(2, 201, 1, 0, false, nil)); reply.status != 40 {
		t.Fatalf("read before login: status %d", reply.status)
	}
	if reply := r.roundTrip(r.requestFrame(2, 38, 1, 0, false, nil)); reply.command != 13 || reply.reason != 15 {
		t.Fatalf("legacy login: %+v", reply)
	}
	r.login()
	if reply := r.roundTrip(r.requestFrame(2, 9999, 1, r.session, false, nil)); reply.status != 3 {
		t.Fatalf("unknown code: status %d, want 3", reply.status)
	}
	if reply := r.roundTrip(r.requestFrame(2, 202, 1, r.session, false, nil)); reply.status != 5 {
		t.Fatalf("replicated code as NonReplicated: status %d, want 5", reply.status)
	}
	// A request checksum that does not match the body: InvalidFormat.
	f := r.requestFrame(128, 0, r.counter, r.session, true, []byte{2, 'o', 'k'})
	f[144] ^= 1
	if reply := r.roundTrip(f); reply.status != 4 {
		t.Fatalf("bad request checksum: status %d", reply.status)
	}
	// An undefined operation byte is dropped without a reply: the next
	// request's reply is the first thing read.
	if _, err := r.conn.Write(r.requestFrame(77, 0, 5, r.session, false, nil)); err != nil {
		t.Fatal(err)
	}
	if reply := r.roundTrip(r.requestFrame(2, 1, 42, r.session, false, nil)); reply.request != 42 {
		t.Fatalf("after a dropped frame, got the reply of request %d", reply.request)
	}
	if streams, err := healthy.GetStreams(ctx(t)); err != nil || len(streams) != 1 {
		t.Fatalf("healthy client at the end: %v %v", streams, err)
	}
}
