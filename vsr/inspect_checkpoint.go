package vsr

// PendingCheckpointOp returns the op of the checkpoint being written (its
// area written and synced, then the superblock recording it), if any: a
// host that chooses its checkpoints (Config.HostCheckpoints) recorded it
// with CheckpointAt; the simulator checks what the host promised about it
// at that moment.
func (r *Replica) PendingCheckpointOp() (uint64, bool) {
	if r.sb.checkpoint == nil {
		return 0, false
	}
	return r.sb.checkpoint.op, true
}
