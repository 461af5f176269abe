package plugin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame kinds of the plugin protocol (PROTOCOL.md). Requests go from the
// runtime to the plugin; every request gets exactly one reply.
const (
	// KindHello is the plugin's first frame: a Hello body.
	KindHello uint8 = 1
	// KindOpen carries an OpenRequest; reply Ok or Error.
	KindOpen uint8 = 2
	// KindPoll asks a source for a batch (empty body); reply Batch or Error.
	KindPoll uint8 = 3
	// KindBatch carries a ProducedBatch.
	KindBatch uint8 = 4
	// KindReport carries a BatchResult; reply Ok or Error.
	KindReport uint8 = 5
	// KindConsume carries a SinkBatch; reply Ok or Error.
	KindConsume uint8 = 6
	// KindOk is a success reply (empty body).
	KindOk uint8 = 7
	// KindError is a failure reply: an ErrorBody.
	KindError uint8 = 8
	// KindClose asks the plugin to close and exit; reply Ok.
	KindClose uint8 = 9
)

// ProtocolVersion is the version a Hello announces.
const ProtocolVersion = 1

// FrameHeaderSize is the fixed frame head: u32 body length, u8 kind.
const FrameHeaderSize = 5

// FrameBodyMax bounds a frame body (64 MiB); a longer announced length is
// a protocol error, never an allocation.
const FrameBodyMax = 64 << 20

// ErrFrame reports a malformed frame.
var ErrFrame = errors.New("plugin: malformed frame")

// Hello is the plugin's greeting.
type Hello struct {
	Protocol int    `json:"protocol"`
	Type     string `json:"type"` // "source" or "sink"
	Name     string `json:"name"`
}

// ErrorBody is the body of a KindError frame.
type ErrorBody struct {
	Message string `json:"message"`
}

// Frame is one decoded frame. Body aliases the reader's buffer until the
// next ReadFrame.
type Frame struct {
	Kind uint8
	Body []byte
}

// AppendFrame appends a frame to dst.
func AppendFrame(dst []byte, kind uint8, body []byte) ([]byte, error) {
	if len(body) > FrameBodyMax {
		return nil, fmt.Errorf("%w: body of %d bytes exceeds %d", ErrFrame, len(body), FrameBodyMax)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(body)))
	dst = append(dst, kind)
	return append(dst, body...), nil
}

// DecodeFrame decodes one frame from the start of b and returns it with
// the number of bytes it used; io.ErrUnexpectedEOF when b is short.
func DecodeFrame(b []byte) (Frame, int, error) {
	if len(b) < FrameHeaderSize {
		return Frame{}, 0, io.ErrUnexpectedEOF
	}
	n, kind, err := decodeFrameHeader(b)
	if err != nil {
		return Frame{}, 0, err
	}
	end := FrameHeaderSize + int(n)
	if len(b) < end {
		return Frame{}, 0, io.ErrUnexpectedEOF
	}
	return Frame{Kind: kind, Body: b[FrameHeaderSize:end]}, end, nil
}

// decodeFrameHeader checks the FrameHeaderSize bytes at the start of head
// and returns the announced body length and the kind.
func decodeFrameHeader(head []byte) (uint32, uint8, error) {
	n := binary.LittleEndian.Uint32(head)
	if n > FrameBodyMax {
		return 0, 0, fmt.Errorf("%w: body length %d exceeds %d", ErrFrame, n, FrameBodyMax)
	}
	kind := head[4]
	if kind < KindHello || kind > KindClose {
		return 0, 0, fmt.Errorf("%w: unknown kind %d", ErrFrame, kind)
	}
	return n, kind, nil
}

// FrameReader reads frames from a stream, reusing one buffer.
type FrameReader struct {
	r    io.Reader
	head [FrameHeaderSize]byte
	buf  []byte
}

// NewFrameReader returns a reader over r.
func NewFrameReader(r io.Reader) *FrameReader { return &FrameReader{r: r} }

// ReadFrame reads the next frame; io.EOF at a clean end of stream.
func (fr *FrameReader) ReadFrame() (Frame, error) {
	head := fr.head[:]
	if _, err := io.ReadFull(fr.r, head); err != nil {
		return Frame{}, err
	}
	n, kind, err := decodeFrameHeader(head)
	if err != nil {
		return Frame{}, err
	}
	if cap(fr.buf) < int(n) {
		fr.buf = make([]byte, n)
	}
	fr.buf = fr.buf[:n]
	if _, err := io.ReadFull(fr.r, fr.buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	return Frame{Kind: kind, Body: fr.buf}, nil
}

// WriteFrame writes one frame to w in a single Write.
func WriteFrame(w io.Writer, scratch []byte, kind uint8, body []byte) ([]byte, error) {
	out, err := AppendFrame(scratch[:0], kind, body)
	if err != nil {
		return scratch, err
	}
	_, err = w.Write(out)
	return out, err
}
