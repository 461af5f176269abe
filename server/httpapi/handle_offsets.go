package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// getConsumerOffset handles GET .../consumer-offsets?consumer_id=&partition_id=.
func (a *api) getConsumerOffset(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	target, err := offsetTargetFromQuery(r)
	if err != nil {
		return err
	}
	payload, err := ls.Do(&wire.GetConsumerOffsetRequest{OffsetTarget: target})
	if err != nil {
		return err
	}
	if len(payload) == 0 {
		return fail(wire.ErrConsumerOffsetNotFound, "consumer_id", "no offset stored for consumer %s", target.Consumer.ID)
	}
	var off wire.ConsumerOffset
	if err := off.Decode(payload); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, offsetJSON{PartitionID: off.PartitionID, CurrentOffset: off.CurrentOffset,
		StoredOffset: off.StoredOffset})
	return nil
}

// storeOffsetRequest is the body of PUT .../consumer-offsets. consumer_id
// is a number or a name.
type storeOffsetRequest struct {
	ConsumerID  json.RawMessage `json:"consumer_id"`
	PartitionID *json.Number    `json:"partition_id"`
	Offset      *json.Number    `json:"offset"`
}

// consumerFromJSON reads a consumer id sent as a JSON number or string.
func consumerFromJSON(raw json.RawMessage) (wire.Consumer, error) {
	text := "0"
	if len(raw) > 0 && string(raw) != "null" {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			text = s
		} else {
			var n json.Number
			if err := json.Unmarshal(raw, &n); err != nil {
				return wire.Consumer{}, badRequest("consumer_id", "consumer_id must be a number or a name")
			}
			text = n.String()
		}
	}
	id, err := parseIdentifier(text, "consumer_id")
	return wire.Consumer{Kind: wire.ConsumerKindSingle, ID: id}, err
}

// storeConsumerOffset handles PUT .../consumer-offsets.
func (a *api) storeConsumerOffset(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	var body storeOffsetRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	consumer, err := consumerFromJSON(body.ConsumerID)
	if err != nil {
		return err
	}
	partition := uint32(0)
	if body.PartitionID != nil {
		if partition, err = requiredU32(body.PartitionID, "partition_id"); err != nil {
			return err
		}
	}
	offset, err := requiredU64(body.Offset, "offset")
	if err != nil {
		return err
	}
	req := wire.StoreConsumerOffsetRequest{
		OffsetTarget: wire.OffsetTarget{Consumer: consumer, StreamID: stream, TopicID: topic,
			Partition: wire.SomePartition(partition)},
		Offset: offset, Ack: wire.AckQuorum,
	}
	return doEmpty(w, ls, &req, http.StatusNoContent)
}

// deleteConsumerOffset handles DELETE .../consumer-offsets/{consumer_id}
// ?partition_id=.
func (a *api) deleteConsumerOffset(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "consumer_id")
	if err != nil {
		return err
	}
	partition, _, err := queryU32(r, "partition_id", 0)
	if err != nil {
		return err
	}
	req := wire.DeleteConsumerOffsetRequest{
		OffsetTarget: wire.OffsetTarget{Consumer: wire.Consumer{Kind: wire.ConsumerKindSingle, ID: id},
			StreamID: stream, TopicID: topic, Partition: wire.SomePartition(partition)},
		Ack: wire.AckQuorum,
	}
	return doEmpty(w, ls, &req, http.StatusNoContent)
}

// getConsumerGroups handles GET .../consumer-groups.
func (a *api) getConsumerGroups(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	payload, err := ls.Do(&wire.GetConsumerGroupsRequest{StreamID: stream, TopicID: topic})
	if err != nil {
		return err
	}
	groups, err := wire.DecodeConsumerGroups(payload)
	if err != nil {
		return err
	}
	out := make([]groupJSON, 0, len(groups))
	for i := range groups {
		out = append(out, groupFrom(&groups[i]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getConsumerGroup handles GET .../consumer-groups/{group_id}.
func (a *api) getConsumerGroup(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	target, err := groupTarget(r)
	if err != nil {
		return err
	}
	payload, err := ls.Do(&wire.GetConsumerGroupRequest{GroupTarget: target})
	if err != nil {
		return err
	}
	if len(payload) == 0 {
		return fail(wire.ErrConsumerGroupIdNotFound, "group_id", "consumer group %s not found", target.GroupID)
	}
	var details wire.ConsumerGroupDetails
	if err := details.Decode(payload); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, groupDetailsFrom(&details))
	return nil
}

// groupTarget parses {stream_id}, {topic_id} and {group_id}.
func groupTarget(r *http.Request) (wire.GroupTarget, error) {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return wire.GroupTarget{}, err
	}
	group, err := pathID(r, "group_id")
	return wire.GroupTarget{StreamID: stream, TopicID: topic, GroupID: group}, err
}

// createGroupRequest is the body of POST .../consumer-groups.
type createGroupRequest struct {
	Name string `json:"name"`
}

// createConsumerGroup handles POST .../consumer-groups.
func (a *api) createConsumerGroup(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	stream, topic, err := pathIDs(r)
	if err != nil {
		return err
	}
	var body createGroupRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.Name == "" {
		return fail(wire.ErrInvalidConsumerGroupName, "name", "consumer group name is required")
	}
	var details wire.ConsumerGroupDetails
	req := wire.CreateConsumerGroupRequest{StreamID: stream, TopicID: topic, Name: body.Name}
	if err := doDecode(ls, &req, &details); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, groupDetailsFrom(&details))
	return nil
}

// deleteConsumerGroup handles DELETE .../consumer-groups/{group_id}.
func (a *api) deleteConsumerGroup(w http.ResponseWriter, r *http.Request, ls *server.LocalSession) error {
	target, err := groupTarget(r)
	if err != nil {
		return err
	}
	return doEmpty(w, ls, &wire.DeleteConsumerGroupRequest{GroupTarget: target}, http.StatusNoContent)
}
