package cli

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/stratabroker/strata/client"
)

// headerKinds maps the kind names of --header (Iggy's CLI's names) to
// TLV kinds.
var headerKinds = map[string]client.Kind{
	"raw": client.KindRaw, "string": client.KindString, "bool": client.KindBool,
	"int8": client.KindInt8, "int16": client.KindInt16, "int32": client.KindInt32, "int64": client.KindInt64,
	"int128": client.KindInt128, "uint8": client.KindUint8, "uint16": client.KindUint16, "uint32": client.KindUint32,
	"uint64": client.KindUint64, "uint128": client.KindUint128, "float32": client.KindFloat32, "float64": client.KindFloat64,
}

const headerKindList = "raw, string, bool, int8, int16, int32, int64, int128, uint8, uint16, uint32, uint64, uint128, float32, float64"

// headerItemMax is the longest header key or value (§4.7).
const headerItemMax = 255

// parseHeaders parses the --header values: each KEY:KIND:VALUE or
// KEY=VALUE, several comma separated in one value as Iggy's CLI takes
// them. A comma that does not start another header (the piece after it
// is no KEY:KIND: or KEY=) belongs to the value.
func parseHeaders(specs []string) ([]client.Header, error) {
	var out []client.Header
	for _, spec := range specs {
		var pieces []string
		for _, piece := range strings.Split(spec, ",") {
			if len(pieces) > 0 && !startsHeader(piece) {
				pieces[len(pieces)-1] += "," + piece
				continue
			}
			pieces = append(pieces, piece)
		}
		for _, piece := range pieces {
			h, err := parseHeader(piece)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// startsHeader reports whether s begins a header: KEY=... or KEY:KIND:...
func startsHeader(s string) bool {
	eq, colon := strings.IndexByte(s, '='), strings.IndexByte(s, ':')
	if eq > 0 && (colon < 0 || eq < colon) {
		return true
	}
	parts := strings.SplitN(s, ":", 3)
	if len(parts) < 3 || parts[0] == "" {
		return false
	}
	_, ok := headerKinds[strings.ToLower(parts[1])]
	return ok
}

// parseHeader parses one KEY:KIND:VALUE (or KEY=VALUE, a string).
func parseHeader(s string) (client.Header, error) {
	var key, kind, value string
	eq, colon := strings.IndexByte(s, '='), strings.IndexByte(s, ':')
	if eq >= 0 && (colon < 0 || eq < colon) {
		key, kind, value = s[:eq], "string", s[eq+1:]
	} else {
		parts := strings.SplitN(s, ":", 3)
		if len(parts) != 3 {
			return client.Header{}, usagef("--header %q: want KEY:KIND:VALUE (KIND one of %s) or KEY=VALUE", s, headerKindList)
		}
		key, kind, value = parts[0], strings.ToLower(parts[1]), parts[2]
	}
	if key == "" || len(key) > headerItemMax {
		return client.Header{}, usagef("--header %q: the key must be 1..%d bytes", s, headerItemMax)
	}
	v, err := headerValue(kind, value)
	if err != nil {
		return client.Header{}, usagef("--header %q: %v", s, err)
	}
	return client.Header{Key: client.StringValue(key), Value: v}, nil
}

// headerValue encodes value as a TLV item of kind (little endian, as
// §4.7 and Iggy's HeaderValue store them).
func headerValue(kind, value string) (client.Value, error) {
	k, ok := headerKinds[kind]
	if !ok {
		return client.Value{}, fmt.Errorf("unknown kind %q (one of %s)", kind, headerKindList)
	}
	le := binary.LittleEndian
	var data []byte
	switch k {
	case client.KindRaw, client.KindString:
		if value == "" || len(value) > headerItemMax {
			return client.Value{}, fmt.Errorf("a %s value must be 1..%d bytes", kind, headerItemMax)
		}
		data = []byte(value)
	case client.KindBool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return client.Value{}, fmt.Errorf("%q is not a bool (true or false)", value)
		}
		data = []byte{0}
		if b {
			data[0] = 1
		}
	case client.KindInt8, client.KindInt16, client.KindInt32, client.KindInt64:
		bits := map[client.Kind]int{client.KindInt8: 8, client.KindInt16: 16, client.KindInt32: 32, client.KindInt64: 64}[k]
		n, err := strconv.ParseInt(value, 10, bits)
		if err != nil {
			return client.Value{}, fmt.Errorf("%q is not an %s", value, kind)
		}
		data = le.AppendUint64(nil, uint64(n))[:bits/8]
	case client.KindUint8, client.KindUint16, client.KindUint32, client.KindUint64:
		bits := map[client.Kind]int{client.KindUint8: 8, client.KindUint16: 16, client.KindUint32: 32, client.KindUint64: 64}[k]
		n, err := strconv.ParseUint(value, 10, bits)
		if err != nil {
			return client.Value{}, fmt.Errorf("%q is not a %s", value, kind)
		}
		data = le.AppendUint64(nil, n)[:bits/8]
	case client.KindInt128, client.KindUint128:
		n, ok := new(big.Int).SetString(value, 10)
		lo, hi := new(big.Int).Lsh(big.NewInt(-1), 127), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
		if k == client.KindUint128 {
			lo, hi = big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))
		}
		if !ok || n.Cmp(lo) < 0 || n.Cmp(hi) > 0 {
			return client.Value{}, fmt.Errorf("%q is not a %s", value, kind)
		}
		if n.Sign() < 0 {
			n.Add(n, new(big.Int).Lsh(big.NewInt(1), 128)) // two's complement
		}
		be := n.FillBytes(make([]byte, 16))
		data = make([]byte, 16)
		for i := range be {
			data[i] = be[15-i]
		}
	case client.KindFloat32:
		f, err := strconv.ParseFloat(value, 32)
		if err != nil {
			return client.Value{}, fmt.Errorf("%q is not a float32", value)
		}
		data = le.AppendUint32(nil, math.Float32bits(float32(f)))
	case client.KindFloat64:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return client.Value{}, fmt.Errorf("%q is not a float64", value)
		}
		data = le.AppendUint64(nil, math.Float64bits(f))
	}
	return client.Value{Kind: k, Data: data}, nil
}

// headerValueText renders a header item as --header takes it back: text
// for strings, decimal numbers (128-bit ones too), base64 for raw.
func headerValueText(v client.Value) string {
	if (v.Kind == client.KindInt128 || v.Kind == client.KindUint128) && len(v.Data) == 16 {
		be := make([]byte, 16)
		for i := range be {
			be[i] = v.Data[15-i]
		}
		n := new(big.Int).SetBytes(be)
		if v.Kind == client.KindInt128 && v.Data[15]&0x80 != 0 {
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), 128))
		}
		return n.String()
	}
	return v.String()
}
