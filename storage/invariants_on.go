//go:build invariants

package storage

import "github.com/stratabroker/strata/net/wire"

// checkBatchInvariants fully validates a batch handed to Append; built
// only with the invariants tag.
func checkBatchInvariants(batch []byte) error {
	return wire.ValidateBatch(batch, wire.BatchView(batch).MessageCount())
}
