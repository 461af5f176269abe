package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// CreateStream creates a stream (command 202) and returns it.
func (c *Client) CreateStream(ctx context.Context, name string) (*StreamDetails, error) {
	var out *StreamDetails
	err := c.exec(ctx, &wire.CreateStreamRequest{Name: name}, func(p []byte) (err error) {
		out, err = decodeStreamDetails(p)
		return err
	})
	return out, err
}

// GetStream returns a stream with its topics (command 200); ErrNotFound
// when it does not exist.
func (c *Client) GetStream(ctx context.Context, stream Identifier) (*StreamDetails, error) {
	var out *StreamDetails
	err := c.exec(ctx, &wire.GetStreamRequest{StreamID: stream.toWire()}, func(p []byte) (err error) {
		if len(p) == 0 {
			return ErrNotFound
		}
		out, err = decodeStreamDetails(p)
		return err
	})
	return out, err
}

// GetStreams lists every stream (command 201).
func (c *Client) GetStreams(ctx context.Context) ([]Stream, error) {
	var out []Stream
	err := c.exec(ctx, &wire.GetStreamsRequest{}, func(p []byte) error {
		streams, err := wire.DecodeStreams(p)
		out = fromWire(streams, streamFromWire)
		return err
	})
	return out, err
}

// UpdateStream renames a stream (command 204).
func (c *Client) UpdateStream(ctx context.Context, stream Identifier, name string) error {
	return c.exec(ctx, &wire.UpdateStreamRequest{StreamID: stream.toWire(), Name: name}, nil)
}

// DeleteStream deletes a stream and everything in it (command 203).
func (c *Client) DeleteStream(ctx context.Context, stream Identifier) error {
	return c.exec(ctx, &wire.DeleteStreamRequest{StreamID: stream.toWire()}, nil)
}

// PurgeStream empties every partition of every topic of a stream
// (command 205).
func (c *Client) PurgeStream(ctx context.Context, stream Identifier) error {
	return c.exec(ctx, &wire.PurgeStreamRequest{StreamID: stream.toWire()}, nil)
}
