package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// GetStats returns the server statistics (command 10).
func (c *Client) GetStats(ctx context.Context) (*Stats, error) {
	var out *Stats
	err := c.exec(ctx, wire.CodeGetStats, nil, func(p []byte) (err error) {
		out, err = decodeStats(p)
		return err
	})
	return out, err
}

// GetMe returns the calling connection's client record (command 20).
func (c *Client) GetMe(ctx context.Context) (*ClientDetails, error) {
	return c.getClient(ctx, wire.CodeGetMe, nil)
}

// GetClient returns one connected client by its server connection number
// (command 21); ErrNotFound when unknown.
func (c *Client) GetClient(ctx context.Context, clientID uint32) (*ClientDetails, error) {
	return c.getClient(ctx, wire.CodeGetClient, func(dst []byte) ([]byte, error) {
		return appendU32(dst, clientID), nil
	})
}

func (c *Client) getClient(ctx context.Context, code wire.Code, build func([]byte) ([]byte, error)) (*ClientDetails, error) {
	var out *ClientDetails
	err := c.exec(ctx, code, build, func(p []byte) (err error) {
		if len(p) == 0 {
			return ErrNotFound
		}
		out, err = decodeClientDetails(p)
		return err
	})
	return out, err
}

// GetClients lists the connected clients (command 22).
func (c *Client) GetClients(ctx context.Context) ([]ClientInfo, error) {
	var out []ClientInfo
	err := c.exec(ctx, wire.CodeGetClients, nil, func(p []byte) error {
		r := reader{b: p}
		for !r.done() {
			out = append(out, readClientInfo(&r))
		}
		return r.err
	})
	return out, err
}

// GetClusterMetadata returns the cluster description (command 12).
func (c *Client) GetClusterMetadata(ctx context.Context) (*ClusterMetadata, error) {
	var out *ClusterMetadata
	err := c.exec(ctx, wire.CodeGetClusterMetadata, nil, func(p []byte) (err error) {
		out, err = decodeClusterMetadata(p)
		return err
	})
	return out, err
}
