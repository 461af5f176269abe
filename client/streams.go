package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// CreateStream creates a stream (command 202) and returns it.
func (c *Client) CreateStream(ctx context.Context, name string) (*StreamDetails, error) {
	var out *StreamDetails
	err := c.exec(ctx, wire.CodeCreateStream, func(dst []byte) ([]byte, error) {
		return appendName(dst, "stream name", name)
	}, func(p []byte) (err error) {
		out, err = decodeStreamDetails(p)
		return err
	})
	return out, err
}

// GetStream returns a stream with its topics (command 200); ErrNotFound
// when it does not exist.
func (c *Client) GetStream(ctx context.Context, stream Identifier) (*StreamDetails, error) {
	var out *StreamDetails
	err := c.exec(ctx, wire.CodeGetStream, func(dst []byte) ([]byte, error) {
		return appendIdentifier(dst, stream)
	}, func(p []byte) (err error) {
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
	err := c.exec(ctx, wire.CodeGetStreams, nil, func(p []byte) error {
		r := reader{b: p}
		for !r.done() {
			out = append(out, readStream(&r))
		}
		return r.err
	})
	return out, err
}

// UpdateStream renames a stream (command 204).
func (c *Client) UpdateStream(ctx context.Context, stream Identifier, name string) error {
	return c.exec(ctx, wire.CodeUpdateStream, func(dst []byte) ([]byte, error) {
		dst, err := appendIdentifier(dst, stream)
		if err != nil {
			return nil, err
		}
		return appendName(dst, "stream name", name)
	}, nil)
}

// DeleteStream deletes a stream and everything in it (command 203).
func (c *Client) DeleteStream(ctx context.Context, stream Identifier) error {
	return c.exec(ctx, wire.CodeDeleteStream, identifierBody(stream), nil)
}

// PurgeStream empties every partition of every topic of a stream
// (command 205).
func (c *Client) PurgeStream(ctx context.Context, stream Identifier) error {
	return c.exec(ctx, wire.CodePurgeStream, identifierBody(stream), nil)
}

// identifierBody returns a builder appending the given identifiers.
func identifierBody(ids ...Identifier) func([]byte) ([]byte, error) {
	return func(dst []byte) ([]byte, error) {
		var err error
		for _, id := range ids {
			if dst, err = appendIdentifier(dst, id); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
}
