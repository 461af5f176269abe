package group

// plantedApplyBeforeCommit is the planted vsr.BugOffsetStoreBeforeCommit:
// the primary applies a client's operation to its machine when the request
// arrives, before it is prepared and committed, and carries out its
// effects (the offset file), as an offset cache written ahead of
// replication would. The op commits and is applied again later; if it
// never commits (a view change truncates it), the primary's state holds
// an operation the group never committed. Only the simulator plants it.
func (h *Host) plantedApplyBeforeCommit(operation uint8, body []byte) {
	if !h.replica.Primary() || h.failed != nil {
		return
	}
	h.machine.Apply(h.machine.LastOp(), 0, operation, body)
	for _, e := range h.machine.TakeEffects() {
		_, _, _ = h.b.Effects.CarryOut(h.machine, e)
	}
}

// DescriptorCheckpoints reports whether the group's checkpoints are the
// host's partition descriptors (Config.CheckpointEveryOps), recorded only
// once the segment and offset writes they cover are synced; otherwise vsr
// checkpoints the whole machine at an interval. The planted
// vsr.BugCheckpointBeforeSegmentSync acts only on descriptors.
func (h *Host) DescriptorCheckpoints() bool { return h.cfg.Replica.HostCheckpoints }
