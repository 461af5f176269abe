package wire

import (
	"bytes"
	"testing"
)

// recordDecoders are the server→client record decoders, indexed by the
// fuzz input's first byte; each re-encodes what it decoded and the result
// must decode to the same bytes.
var recordDecoders = []func(b []byte) ([]byte, error){
	func(b []byte) ([]byte, error) {
		var s StreamDetails
		if err := s.Decode(b); err != nil {
			return nil, err
		}
		return s.AppendTo(nil)
	},
	func(b []byte) ([]byte, error) {
		var s TopicDetails
		if err := s.Decode(b); err != nil {
			return nil, err
		}
		return s.AppendTo(nil)
	},
	func(b []byte) ([]byte, error) {
		l, err := DecodeTopicList(b)
		if err != nil {
			return nil, err
		}
		return AppendTopicList(nil, l)
	},
	func(b []byte) ([]byte, error) {
		l, err := DecodeStreams(b)
		if err != nil {
			return nil, err
		}
		return AppendStreams(nil, l)
	},
	func(b []byte) ([]byte, error) {
		var u UserDetails
		if err := u.Decode(b); err != nil {
			return nil, err
		}
		return u.AppendTo(nil)
	},
	func(b []byte) ([]byte, error) {
		l, err := DecodeUsers(b)
		if err != nil {
			return nil, err
		}
		return AppendUsers(nil, l)
	},
	func(b []byte) ([]byte, error) {
		l, err := DecodePersonalAccessTokens(b)
		if err != nil {
			return nil, err
		}
		return AppendPersonalAccessTokens(nil, l)
	},
	func(b []byte) ([]byte, error) {
		var r RegisterReply
		if err := r.Decode(b); err != nil {
			return nil, err
		}
		return r.AppendTo(nil)
	},
	func(b []byte) ([]byte, error) {
		var g ConsumerGroupDetails
		if err := g.Decode(b); err != nil {
			return nil, err
		}
		return g.AppendTo(nil)
	},
	func(b []byte) ([]byte, error) {
		l, err := DecodeConsumerGroups(b)
		if err != nil {
			return nil, err
		}
		return AppendConsumerGroups(nil, l)
	},
	func(b []byte) ([]byte, error) {
		var c ClientDetails
		if err := c.Decode(b); err != nil {
			return nil, err
		}
		return c.AppendTo(nil), nil
	},
	func(b []byte) ([]byte, error) {
		l, err := DecodeClients(b)
		if err != nil {
			return nil, err
		}
		return AppendClients(nil, l), nil
	},
	func(b []byte) ([]byte, error) {
		var s Stats
		if err := s.Decode(b); err != nil {
			return nil, err
		}
		return s.AppendTo(nil), nil
	},
	func(b []byte) ([]byte, error) {
		var c ClusterMetadata
		if err := c.Decode(b); err != nil {
			return nil, err
		}
		return c.AppendTo(nil), nil
	},
	func(b []byte) ([]byte, error) {
		var r DescribeOptionsReply
		if err := r.Decode(b); err != nil {
			return nil, err
		}
		return r.AppendTo(nil)
	},
	func(b []byte) ([]byte, error) {
		var c ConsumerOffset
		if err := c.Decode(b); err != nil {
			return nil, err
		}
		return c.AppendTo(nil), nil
	},
	func(b []byte) ([]byte, error) {
		var r SendMessagesReply
		if err := r.Decode(b); err != nil {
			return nil, err
		}
		return r.AppendTo(nil), nil
	},
	func(b []byte) ([]byte, error) {
		var s SyncConsumerGroupReply
		if err := s.Decode(b); err != nil {
			return nil, err
		}
		return s.AppendTo(nil), nil
	},
	func(b []byte) ([]byte, error) {
		h, rest, err := DecodePolledMessages(b)
		if err != nil {
			return nil, err
		}
		return append(h.AppendTo(nil), rest...), nil
	},
	func(b []byte) ([]byte, error) {
		var c CreatedPersonalAccessToken
		if err := c.Decode(b); err != nil {
			return nil, err
		}
		return c.AppendTo(nil)
	},
}

func FuzzRecords(f *testing.F) {
	td := sampleTopic(1, 2)
	topic, _ := td.AppendTo(nil)
	f.Add(append([]byte{1}, topic...))
	reg, _ := (&RegisterReply{UserID: 1, Session: 2, ServerProtocolVersion: ProtocolVersion, ServerVersion: ServerVersion}).AppendTo(nil)
	f.Add(append([]byte{7}, reg...))
	stats := (&Stats{Hostname: "h", CacheMetrics: []CacheMetrics{{}}}).AppendTo(nil)
	f.Add(append([]byte{12}, stats...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		decode := recordDecoders[int(data[0])%len(recordDecoders)]
		encoded, err := decode(data[1:])
		if err != nil {
			return
		}
		again, err := decode(encoded)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if !bytes.Equal(again, encoded) {
			t.Fatal("decode(encode(x)) != x")
		}
	})
}
