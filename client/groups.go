package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// CreateConsumerGroup creates a consumer group on a topic (command 602).
func (c *Client) CreateConsumerGroup(ctx context.Context, stream, topic Identifier, name string) (*ConsumerGroupDetails, error) {
	var out *ConsumerGroupDetails
	err := c.exec(ctx, &wire.CreateConsumerGroupRequest{StreamID: stream.toWire(), TopicID: topic.toWire(), Name: name},
		func(p []byte) (err error) {
			out, err = decodeConsumerGroupDetails(p)
			return err
		})
	return out, err
}

// GetConsumerGroup returns a group with its members (command 600);
// ErrNotFound when unknown.
func (c *Client) GetConsumerGroup(ctx context.Context, stream, topic, group Identifier) (*ConsumerGroupDetails, error) {
	var out *ConsumerGroupDetails
	err := c.exec(ctx, &wire.GetConsumerGroupRequest{GroupTarget: groupTarget(stream, topic, group)}, func(p []byte) (err error) {
		if len(p) == 0 {
			return ErrNotFound
		}
		out, err = decodeConsumerGroupDetails(p)
		return err
	})
	return out, err
}

// GetConsumerGroups lists a topic's groups (command 601).
func (c *Client) GetConsumerGroups(ctx context.Context, stream, topic Identifier) ([]ConsumerGroup, error) {
	var out []ConsumerGroup
	err := c.exec(ctx, &wire.GetConsumerGroupsRequest{StreamID: stream.toWire(), TopicID: topic.toWire()}, func(p []byte) error {
		groups, err := wire.DecodeConsumerGroups(p)
		out = fromWire(groups, consumerGroupFromWire)
		return err
	})
	return out, err
}

// DeleteConsumerGroup deletes a group and its offsets (command 603).
func (c *Client) DeleteConsumerGroup(ctx context.Context, stream, topic, group Identifier) error {
	return c.exec(ctx, &wire.DeleteConsumerGroupRequest{GroupTarget: groupTarget(stream, topic, group)}, nil)
}

// JoinConsumerGroup makes this client (by its protocol client id) a member
// (command 604).
func (c *Client) JoinConsumerGroup(ctx context.Context, stream, topic, group Identifier) error {
	return c.exec(ctx, &wire.JoinConsumerGroupRequest{GroupTarget: groupTarget(stream, topic, group)}, nil)
}

// LeaveConsumerGroup leaves a group (command 605).
func (c *Client) LeaveConsumerGroup(ctx context.Context, stream, topic, group Identifier) error {
	return c.exec(ctx, &wire.LeaveConsumerGroupRequest{GroupTarget: groupTarget(stream, topic, group)}, nil)
}

// GroupAssignment is a SyncConsumerGroup answer: the partitions this
// member may poll now.
type GroupAssignment struct {
	Generation uint64   `json:"generation"`
	Partitions []uint32 `json:"partitions"`
}

// SyncConsumerGroup returns this member's pollable partitions (command
// 606); ErrNotFound when not a member or the group does not exist.
func (c *Client) SyncConsumerGroup(ctx context.Context, stream, topic, group Identifier) (*GroupAssignment, error) {
	var out *GroupAssignment
	err := c.exec(ctx, &wire.SyncConsumerGroupRequest{GroupTarget: groupTarget(stream, topic, group)}, func(p []byte) error {
		if len(p) == 0 {
			return ErrNotFound
		}
		var w wire.SyncConsumerGroupReply
		if err := w.Decode(p); err != nil {
			return err
		}
		out = &GroupAssignment{Generation: w.Generation, Partitions: w.Partitions}
		return nil
	})
	return out, err
}

func groupTarget(stream, topic, group Identifier) wire.GroupTarget {
	return wire.GroupTarget{StreamID: stream.toWire(), TopicID: topic.toWire(), GroupID: group.toWire()}
}
