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

// Snapshot compressions and content types of GetSnapshot (Iggy's codes).
const (
	SnapshotStored   = wire.SnapshotCompressionStored
	SnapshotDeflated = wire.SnapshotCompressionDeflated
	SnapshotBzip2    = wire.SnapshotCompressionBzip2
	SnapshotZstd     = wire.SnapshotCompressionZstd
	SnapshotLzma     = wire.SnapshotCompressionLzma
	SnapshotXz       = wire.SnapshotCompressionXz

	SnapshotFilesystemOverview = wire.SnapshotFilesystemOverview
	SnapshotProcessList        = wire.SnapshotProcessList
	SnapshotResourceUsage      = wire.SnapshotResourceUsage
	SnapshotTest               = wire.SnapshotTest
	SnapshotServerLogs         = wire.SnapshotServerLogs
	SnapshotServerConfig       = wire.SnapshotServerConfig
	SnapshotAll                = wire.SnapshotAll
)

// GetSnapshot returns the server's diagnostics as a ZIP archive, one
// "<type>.txt" entry per type (command 11; SnapshotAll alone is every type
// but test).
func (c *Client) GetSnapshot(ctx context.Context, compression uint8, types ...uint8) ([]byte, error) {
	var out []byte
	err := c.exec(ctx, &wire.GetSnapshotRequest{Compression: compression, Types: types}, func(p []byte) error {
		out = append([]byte(nil), p...)
		return nil
	})
	return out, err
}
