package client

import (
	"context"

	"github.com/stratabroker/strata/net/wire"
)

// GetStats returns the server statistics (command 10).
func (c *Client) GetStats(ctx context.Context) (*Stats, error) {
	var out *Stats
	err := c.exec(ctx, &wire.GetStatsRequest{}, func(p []byte) (err error) {
		out, err = decodeStats(p)
		return err
	})
	return out, err
}

// GetMe returns the calling connection's client record (command 20).
func (c *Client) GetMe(ctx context.Context) (*ClientDetails, error) {
	return c.getClient(ctx, &wire.GetMeRequest{})
}

// GetClient returns one connected client by its server connection number
// (command 21); ErrNotFound when unknown.
func (c *Client) GetClient(ctx context.Context, clientID uint32) (*ClientDetails, error) {
	return c.getClient(ctx, &wire.GetClientRequest{ClientID: clientID})
}

func (c *Client) getClient(ctx context.Context, req requestBody) (*ClientDetails, error) {
	var out *ClientDetails
	err := c.exec(ctx, req, func(p []byte) (err error) {
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
	err := c.exec(ctx, &wire.GetClientsRequest{}, func(p []byte) error {
		clients, err := wire.DecodeClients(p)
		out = fromWire(clients, clientInfoFromWire)
		return err
	})
	return out, err
}

// GetClusterMetadata returns the cluster description (command 12).
func (c *Client) GetClusterMetadata(ctx context.Context) (*ClusterMetadata, error) {
	var out *ClusterMetadata
	err := c.exec(ctx, &wire.GetClusterMetadataRequest{}, func(p []byte) (err error) {
		out, err = decodeClusterMetadata(p)
		return err
	})
	return out, err
}
