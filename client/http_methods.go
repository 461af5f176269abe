package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/stratabroker/strata/net/wire"
)

// The JSON records of the REST API (server/httpapi), decoded into the
// binary client's record types.

type streamJSON struct {
	ID            uint32            `json:"id"`
	CreatedAt     uint64            `json:"created_at"`
	Name          string            `json:"name"`
	Size          uint64            `json:"size"`
	MessagesCount uint64            `json:"messages_count"`
	TopicsCount   uint32            `json:"topics_count"`
	Options       map[string]string `json:"options"`
	Topics        []topicJSON       `json:"topics"`
}

type topicOptionJSON struct {
	Value    string `json:"value"`
	Explicit bool   `json:"explicit"`
}

type topicJSON struct {
	ID                   uint32                     `json:"id"`
	CreatedAt            uint64                     `json:"created_at"`
	Name                 string                     `json:"name"`
	Size                 uint64                     `json:"size"`
	MessageExpiry        uint64                     `json:"message_expiry"`
	CompressionAlgorithm string                     `json:"compression_algorithm"`
	MaxTopicSize         uint64                     `json:"max_topic_size"`
	MessagesCount        uint64                     `json:"messages_count"`
	PartitionsCount      uint32                     `json:"partitions_count"`
	Options              map[string]topicOptionJSON `json:"options"`
	Partitions           []Partition                `json:"partitions"`
}

// stringOptions turns a JSON string map into Options of string values.
func stringOptions(m map[string]string) Options {
	var out Options
	for k, v := range m {
		out = out.With(k, StringValue(v))
	}
	return out
}

// optionsMap renders Options as the string map the REST API accepts.
func optionsMap(o Options) map[string]string {
	if len(o) == 0 {
		return nil
	}
	m := make(map[string]string, len(o))
	for _, e := range o {
		m[e.Key] = e.Value.String()
	}
	return m
}

func (s *streamJSON) stream() Stream {
	return Stream{ID: s.ID, CreatedAt: s.CreatedAt, TopicsCount: s.TopicsCount, SizeBytes: s.Size,
		MessagesCount: s.MessagesCount, Name: s.Name, Options: stringOptions(s.Options)}
}

func (s *streamJSON) details() *StreamDetails {
	d := &StreamDetails{Stream: s.stream(), Topics: make([]Topic, 0, len(s.Topics))}
	for i := range s.Topics {
		d.Topics = append(d.Topics, s.Topics[i].topic())
	}
	return d
}

func (t *topicJSON) topic() Topic {
	out := Topic{ID: t.ID, CreatedAt: t.CreatedAt, PartitionsCount: t.PartitionsCount, MessageExpiry: t.MessageExpiry,
		MaxTopicSize: t.MaxTopicSize, SizeBytes: t.Size, MessagesCount: t.MessagesCount, Name: t.Name}
	if t.CompressionAlgorithm == "gzip" {
		out.CompressionAlgorithm = wire.CompressionGzip
	}
	for k, v := range t.Options {
		if v.Explicit {
			out.Options = out.Options.With(k, StringValue(v.Value))
		} else {
			out.DerivedOptions = out.DerivedOptions.With(k, StringValue(v.Value))
		}
	}
	return out
}

func (t *topicJSON) details() *TopicDetails {
	return &TopicDetails{Topic: t.topic(), Partitions: t.Partitions}
}

// CreateStream creates a stream (POST /streams).
func (c *HTTPClient) CreateStream(ctx context.Context, name string) (*StreamDetails, error) {
	var out streamJSON
	if err := c.call(ctx, http.MethodPost, "/streams", nil, map[string]string{"name": name}, &out, false); err != nil {
		return nil, err
	}
	return out.details(), nil
}

// GetStream reads one stream with its topics; ErrNotFound when missing.
func (c *HTTPClient) GetStream(ctx context.Context, stream Identifier) (*StreamDetails, error) {
	var out streamJSON
	if err := c.call(ctx, http.MethodGet, pathOf("streams", stream.String()), nil, nil, &out, true); err != nil {
		return nil, err
	}
	return out.details(), nil
}

// GetStreams lists the streams.
func (c *HTTPClient) GetStreams(ctx context.Context) ([]Stream, error) {
	var out []streamJSON
	if err := c.call(ctx, http.MethodGet, "/streams", nil, nil, &out, false); err != nil {
		return nil, err
	}
	streams := make([]Stream, 0, len(out))
	for i := range out {
		streams = append(streams, out[i].stream())
	}
	return streams, nil
}

// UpdateStream renames a stream.
func (c *HTTPClient) UpdateStream(ctx context.Context, stream Identifier, name string) error {
	return c.call(ctx, http.MethodPut, pathOf("streams", stream.String()), nil, map[string]string{"name": name}, nil, false)
}

// DeleteStream deletes a stream.
func (c *HTTPClient) DeleteStream(ctx context.Context, stream Identifier) error {
	return c.call(ctx, http.MethodDelete, pathOf("streams", stream.String()), nil, nil, nil, false)
}

// PurgeStream deletes a stream's messages.
func (c *HTTPClient) PurgeStream(ctx context.Context, stream Identifier) error {
	return c.call(ctx, http.MethodDelete, pathOf("streams", stream.String(), "purge"), nil, nil, nil, false)
}

// topicRequestJSON is the body of topic create and update.
type topicRequestJSON struct {
	Name                 string            `json:"name"`
	PartitionsCount      *uint32           `json:"partitions_count,omitempty"`
	CompressionAlgorithm string            `json:"compression_algorithm"`
	MessageExpiry        uint64            `json:"message_expiry"`
	MaxTopicSize         uint64            `json:"max_topic_size"`
	Options              map[string]string `json:"options,omitempty"`
}

// CreateTopic creates a topic with partitions partitions; options carry
// any topic key (§4.8) as text.
func (c *HTTPClient) CreateTopic(ctx context.Context, stream Identifier, name string, partitions uint32, options Options) (*TopicDetails, error) {
	body := topicRequestJSON{Name: name, PartitionsCount: &partitions, CompressionAlgorithm: "none", Options: optionsMap(options)}
	var out topicJSON
	if err := c.call(ctx, http.MethodPost, pathOf("streams", stream.String(), "topics"), nil, body, &out, false); err != nil {
		return nil, err
	}
	return out.details(), nil
}

// GetTopic reads one topic with its partitions; ErrNotFound when missing.
func (c *HTTPClient) GetTopic(ctx context.Context, stream, topic Identifier) (*TopicDetails, error) {
	var out topicJSON
	if err := c.call(ctx, http.MethodGet, topicPath(stream, topic), nil, nil, &out, true); err != nil {
		return nil, err
	}
	return out.details(), nil
}

// GetTopics lists a stream's topics.
func (c *HTTPClient) GetTopics(ctx context.Context, stream Identifier) ([]Topic, error) {
	var out []topicJSON
	if err := c.call(ctx, http.MethodGet, pathOf("streams", stream.String(), "topics"), nil, nil, &out, false); err != nil {
		return nil, err
	}
	topics := make([]Topic, 0, len(out))
	for i := range out {
		topics = append(topics, out[i].topic())
	}
	return topics, nil
}

// UpdateTopic renames a topic and sets its options.
func (c *HTTPClient) UpdateTopic(ctx context.Context, stream, topic Identifier, name string, options Options) error {
	body := topicRequestJSON{Name: name, CompressionAlgorithm: "none", Options: optionsMap(options)}
	return c.call(ctx, http.MethodPut, topicPath(stream, topic), nil, body, nil, false)
}

// DeleteTopic deletes a topic.
func (c *HTTPClient) DeleteTopic(ctx context.Context, stream, topic Identifier) error {
	return c.call(ctx, http.MethodDelete, topicPath(stream, topic), nil, nil, nil, false)
}

// PurgeTopic deletes a topic's messages.
func (c *HTTPClient) PurgeTopic(ctx context.Context, stream, topic Identifier) error {
	return c.call(ctx, http.MethodDelete, topicPath(stream, topic, "purge"), nil, nil, nil, false)
}

// CreatePartitions adds count partitions to a topic.
func (c *HTTPClient) CreatePartitions(ctx context.Context, stream, topic Identifier, count uint32) error {
	return c.call(ctx, http.MethodPost, topicPath(stream, topic, "partitions"), nil,
		map[string]uint32{"partitions_count": count}, nil, false)
}

// DeletePartitions removes the last count partitions of a topic.
func (c *HTTPClient) DeletePartitions(ctx context.Context, stream, topic Identifier, count uint32) error {
	q := url.Values{"partitions_count": {strconv.FormatUint(uint64(count), 10)}}
	return c.call(ctx, http.MethodDelete, topicPath(stream, topic, "partitions"), q, nil, nil, false)
}

// GetStats reads the server statistics (GET /stats).
func (c *HTTPClient) GetStats(ctx context.Context) (*Stats, error) {
	var out struct {
		Stats
		IggyServerVersion string  `json:"iggy_server_version"`
		IggyServerSemver  *uint32 `json:"iggy_server_semver"`
	}
	if err := c.call(ctx, http.MethodGet, "/stats", nil, nil, &out, false); err != nil {
		return nil, err
	}
	s := out.Stats
	s.ServerVersion = out.IggyServerVersion
	if out.IggyServerSemver != nil {
		s.ServerSemver = *out.IggyServerSemver
	}
	return &s, nil
}

// clientJSON is a ClientInfo/ClientDetails on the REST API.
type clientJSON struct {
	ClientID            uint32        `json:"client_id"`
	UserID              *uint32       `json:"user_id"`
	Address             string        `json:"address"`
	Transport           string        `json:"transport"`
	ConsumerGroupsCount uint32        `json:"consumer_groups_count"`
	ConsumerGroups      []ClientGroup `json:"consumer_groups"`
}

// transportCodes maps the REST transport names to wire codes.
var transportCodes = map[string]uint8{"tcp": wire.TransportTCP, "quic": wire.TransportQUIC,
	"http": wire.TransportHTTP, "websocket": wire.TransportWebSocket}

func (j *clientJSON) info() ClientInfo {
	out := ClientInfo{ClientID: j.ClientID, UserID: wire.UserIDNone, Transport: transportCodes[j.Transport],
		Address: j.Address, ConsumerGroupsCount: j.ConsumerGroupsCount}
	if j.UserID != nil {
		out.UserID = *j.UserID
	}
	return out
}

// GetMe describes the caller's own client (GET /me).
func (c *HTTPClient) GetMe(ctx context.Context) (*ClientDetails, error) {
	var out clientJSON
	if err := c.call(ctx, http.MethodGet, "/me", nil, nil, &out, true); err != nil {
		return nil, err
	}
	return &ClientDetails{ClientInfo: out.info(), ConsumerGroups: out.ConsumerGroups}, nil
}

// GetClients lists the connected clients.
func (c *HTTPClient) GetClients(ctx context.Context) ([]ClientInfo, error) {
	var out []clientJSON
	if err := c.call(ctx, http.MethodGet, "/clients", nil, nil, &out, false); err != nil {
		return nil, err
	}
	infos := make([]ClientInfo, 0, len(out))
	for i := range out {
		infos = append(infos, out[i].info())
	}
	return infos, nil
}

// messageIDText renders a 128-bit message id in decimal.
func messageIDText(id MessageID) string { return id.String() }

// parseMessageID reads a decimal 128-bit message id.
func parseMessageID(s string) (MessageID, error) { return wire.ParseMessageID(s) }
