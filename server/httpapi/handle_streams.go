package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// streamNotFound is the error of a stream that does not resolve.
func streamNotFound(stream wire.Identifier) error {
	return fail(wire.ErrStreamIdNotFound, "stream_id", "stream %s not found", stream)
}

// requireStream returns streamNotFound when the stream does not resolve
// for the session (used to tell a missing stream from a missing topic
// when a read answers with an empty body).
func requireStream(ls *server.LocalSession, stream wire.Identifier) error {
	payload, err := ls.Do(&wire.GetStreamRequest{StreamID: stream})
	if err != nil {
		return err
	}
	if len(payload) == 0 {
		return streamNotFound(stream)
	}
	return nil
}

// getStreams handles GET /streams.
func (a *api) getStreams(w http.ResponseWriter, _ *http.Request, ls *server.LocalSession) error {
	payload, err := ls.Do(&wire.GetStreamsRequest{})
	if err != nil {
		return err
	}
	streams, err := wire.DecodeStreams(payload)
	if err != nil {
		return err
	}
	out := make([]streamJSON, 0, len(streams))
	for i := range streams {
		out = append(out, streamFrom(&streams[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getStream handles GET /streams/{stream_id}.
func (a *api) getStream(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, err := pathID(r, "stream_id")
	if err != nil {
		return err
	}
	payload, err := ls.Do(&wire.GetStreamRequest{StreamID: stream})
	if err != nil {
		return err
	}
	if len(payload) == 0 {
		return streamNotFound(stream)
	}
	var details wire.StreamDetails
	if err := details.Decode(payload); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, streamDetailsFrom(&details))
	return nil
}

// streamRequest is the body of POST /streams and PUT /streams/{id}.
type streamRequest struct {
	Name    string            `json:"name"`
	Options map[string]string `json:"options"`
}

// createStream handles POST /streams.
func (a *api) createStream(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	var body streamRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.Name == "" {
		return fail(wire.ErrInvalidStreamName, "name", "stream name is required")
	}
	var details wire.StreamDetails
	req := wire.CreateStreamRequest{Name: body.Name, Options: stringOptions(body.Options)}
	if err := doDecode(ls, &req, &details); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, streamDetailsFrom(&details))
	return nil
}

// updateStream handles PUT /streams/{stream_id}.
func (a *api) updateStream(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, err := pathID(r, "stream_id")
	if err != nil {
		return err
	}
	var body streamRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.Name == "" {
		return fail(wire.ErrInvalidStreamName, "name", "stream name is required")
	}
	req := wire.UpdateStreamRequest{StreamID: stream, Name: body.Name, Options: stringOptions(body.Options)}
	return doEmpty(w, ls, &req, http.StatusNoContent)
}

// deleteStream handles DELETE /streams/{stream_id}.
func (a *api) deleteStream(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, err := pathID(r, "stream_id")
	if err != nil {
		return err
	}
	return doEmpty(w, ls, &wire.DeleteStreamRequest{StreamID: stream}, http.StatusNoContent)
}

// purgeStream handles DELETE /streams/{stream_id}/purge.
func (a *api) purgeStream(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, err := pathID(r, "stream_id")
	if err != nil {
		return err
	}
	return doEmpty(w, ls, &wire.PurgeStreamRequest{StreamID: stream}, http.StatusNoContent)
}

// getTopics handles GET /streams/{stream_id}/topics.
func (a *api) getTopics(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, err := pathID(r, "stream_id")
	if err != nil {
		return err
	}
	payload, err := ls.Do(&wire.GetTopicsRequest{StreamID: stream})
	if err != nil {
		return err
	}
	topics, err := wire.DecodeTopicList(payload)
	if err != nil {
		return err
	}
	if len(topics) == 0 {
		if err := requireStream(ls, stream); err != nil {
			return err
		}
	}
	out := make([]topicJSON, 0, len(topics))
	for i := range topics {
		out = append(out, topicFrom(&topics[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getTopic handles GET /streams/{stream_id}/topics/{topic_id}.
func (a *api) getTopic(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	payload, err := ls.Do(&wire.GetTopicRequest{StreamID: stream, TopicID: topic})
	if err != nil {
		return err
	}
	if len(payload) == 0 {
		return topicNotFound(ls, stream, topic)
	}
	var details wire.TopicDetails
	if err := details.Decode(payload); err != nil {
		return err
	}
	fence, err := a.partitionFences(ls, stream, details.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, topicDetailsFrom(&details, fence))
	return nil
}

// noFences is the fence lookup of a topic none of whose partitions is
// fenced.
func noFences(uint32) (server.PartitionFence, bool) { return server.PartitionFence{}, false }

// partitionFences returns the lookup of the fenced partitions of a topic
// for topicDetailsFrom. The stream is resolved to its id only when some
// partition of the server is fenced.
func (a *api) partitionFences(ls *server.LocalSession, stream wire.Identifier, topicID uint32) (func(uint32) (server.PartitionFence, bool), error) {
	if len(a.srv.FencedPartitions()) == 0 {
		return noFences, nil
	}
	streamID := stream.Numeric
	if !stream.IsNumeric() {
		var details wire.StreamDetails
		if err := doDecode(ls, &wire.GetStreamRequest{StreamID: stream}, &details); err != nil {
			return nil, err
		}
		streamID = details.ID
	}
	return func(partitionID uint32) (server.PartitionFence, bool) {
		return a.srv.PartitionFenced(streamID, topicID, partitionID)
	}, nil
}

// topicNotFound returns StreamIdNotFound or TopicIdNotFound, whichever
// applies.
func topicNotFound(ls *server.LocalSession, stream, topic wire.Identifier) error {
	if err := requireStream(ls, stream); err != nil {
		return err
	}
	return fail(wire.ErrTopicIdNotFound, "topic_id", "topic %s of stream %s not found", topic, stream)
}

// topicRequest is the body of POST and PUT topic routes. The three
// top-level settings accept a number (micros or bytes) or a string
// ("7 days", "1 GiB", "unlimited"); options carry any other topic key as
// text, including the Strata durability keys.
type topicRequest struct {
	Name                 string            `json:"name"`
	PartitionsCount      *json.Number      `json:"partitions_count"`
	CompressionAlgorithm json.RawMessage   `json:"compression_algorithm"`
	MessageExpiry        json.RawMessage   `json:"message_expiry"`
	MaxTopicSize         json.RawMessage   `json:"max_topic_size"`
	ReplicationFactor    *json.Number      `json:"replication_factor"`
	Options              map[string]string `json:"options"`
}

// options merges the top-level settings into the options map (a
// top-level value wins over the same key in the map).
func (t *topicRequest) options() (wire.Options, error) {
	merged := map[string]wire.Option{}
	for k, v := range t.Options {
		merged[k] = wire.StringOption(k, v)
	}
	for _, f := range []struct {
		key string
		raw json.RawMessage
	}{
		{wire.TopicOptionCompressionAlgorithm, t.CompressionAlgorithm},
		{wire.TopicOptionMessageExpiry, t.MessageExpiry},
		{wire.TopicOptionMaxTopicSize, t.MaxTopicSize},
	} {
		o, ok, err := rawOption(f.key, f.raw)
		if err != nil {
			return nil, err
		}
		if ok {
			merged[f.key] = o
		}
	}
	out := make(wire.Options, 0, len(merged))
	for _, o := range merged {
		out = append(out, o)
	}
	return out.Sorted(), nil
}

// rawOption converts a JSON number or string into a topic option. Null or
// absent gives ok false. Numbers become uint64 (compression: uint8 code).
func rawOption(key string, raw json.RawMessage) (wire.Option, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return wire.Option{}, false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return wire.StringOption(key, s), true, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return wire.Option{}, false, badRequest(key, "%s must be a number or a string", key)
	}
	v, err := strconv.ParseUint(n.String(), 10, 64)
	if err != nil {
		return wire.Option{}, false, badRequest(key, "%s must be an unsigned number", key)
	}
	if key == wire.TopicOptionCompressionAlgorithm {
		if v > 255 {
			return wire.Option{}, false, badRequest(key, "%s code out of range", key)
		}
		return wire.Uint8Option(key, uint8(v)), true, nil
	}
	return wire.Uint64Option(key, v), true, nil
}

// createTopic handles POST /streams/{stream_id}/topics.
func (a *api) createTopic(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, err := pathID(r, "stream_id")
	if err != nil {
		return err
	}
	var body topicRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.Name == "" {
		return fail(wire.ErrInvalidTopicName, "name", "topic name is required")
	}
	count, err := requiredU32(body.PartitionsCount, "partitions_count")
	if err != nil {
		return err
	}
	opts, err := body.options()
	if err != nil {
		return err
	}
	var details wire.TopicDetails
	req := wire.CreateTopicRequest{StreamID: stream, PartitionsCount: count, Name: body.Name, Options: opts}
	if err := doDecode(ls, &req, &details); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, topicDetailsFrom(&details, noFences)) // a new topic is not fenced
	return nil
}

// updateTopic handles PUT /streams/{stream_id}/topics/{topic_id}.
func (a *api) updateTopic(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	var body topicRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.Name == "" {
		return fail(wire.ErrInvalidTopicName, "name", "topic name is required")
	}
	opts, err := body.options()
	if err != nil {
		return err
	}
	req := wire.UpdateTopicRequest{StreamID: stream, TopicID: topic, Name: body.Name, Options: opts}
	return doEmpty(w, ls, &req, http.StatusNoContent)
}

// deleteTopic handles DELETE /streams/{stream_id}/topics/{topic_id}.
func (a *api) deleteTopic(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	return doEmpty(w, ls, &wire.DeleteTopicRequest{StreamID: stream, TopicID: topic}, http.StatusNoContent)
}

// purgeTopic handles DELETE /streams/{stream_id}/topics/{topic_id}/purge.
func (a *api) purgeTopic(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	return doEmpty(w, ls, &wire.PurgeTopicRequest{StreamID: stream, TopicID: topic}, http.StatusNoContent)
}

// partitionsRequest is the body of POST .../partitions.
type partitionsRequest struct {
	PartitionsCount *json.Number `json:"partitions_count"`
}

// createPartitions handles POST .../topics/{topic_id}/partitions.
func (a *api) createPartitions(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	var body partitionsRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	count, err := requiredU32(body.PartitionsCount, "partitions_count")
	if err != nil {
		return err
	}
	req := wire.CreatePartitionsRequest{StreamID: stream, TopicID: topic, PartitionsCount: count}
	return doEmpty(w, ls, &req, http.StatusCreated)
}

// deletePartitions handles DELETE .../topics/{topic_id}/partitions
// ?partitions_count=.
func (a *api) deletePartitions(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	count, ok, err := queryU32(r, "partitions_count", 0)
	if err != nil {
		return err
	}
	if !ok {
		return badRequest("partitions_count", "partitions_count is required")
	}
	req := wire.DeletePartitionsRequest{StreamID: stream, TopicID: topic, PartitionsCount: count}
	return doEmpty(w, ls, &req, http.StatusNoContent)
}

// deleteSegments handles DELETE .../partitions/{partition_id}
// ?segments_count=.
func (a *api) deleteSegments(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	partition, err := pathU32(r, "partition_id")
	if err != nil {
		return err
	}
	count, ok, err := queryU32(r, "segments_count", 0)
	if err != nil {
		return err
	}
	if !ok {
		return badRequest("segments_count", "segments_count is required")
	}
	req := wire.DeleteSegmentsRequest{StreamID: stream, TopicID: topic, PartitionID: partition, SegmentsCount: count}
	return doEmpty(w, ls, &req, http.StatusNoContent)
}
