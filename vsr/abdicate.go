package vsr

// Abdicate switches abdication on (SetAbdicating(true)).
//
// A replica abdicates when its host cannot serve the state machine: a
// partition whose segments are fenced (damaged, or missing the history a
// checkpoint names) refuses every send and poll, and a primary that
// refuses everything stalls its group while a quorum of healthy replicas
// is up. The host calls SetAbdicating after every input with whether it is
// in that state. An abdicating replica hands the lead of the group to the
// next view whenever it would lead (the primary of its view, in normal
// status or collecting the view change's DoViewChange messages), and
// never starts a view of its own. It does nothing for a group of one,
// after a storage error, and during a restart of every replica
// (restart.go, which passes views on by its own rule).
//
// Safety: starting a view change to a higher view is what any replica
// does on a timeout, at any moment; VSR's safety never depends on why. The
// replica keeps its log, its checkpoint and its durable view, so it goes
// on acknowledging prepares and sending its DoViewChange to the next
// primary (its log may well be the best one: the fence is about its
// segments, not its journal). It only never starts a view of its own: the
// primary of view+1 does, from a view-change quorum's logs, as when a
// candidate cannot hold the view's log (startView). Liveness needs a
// replica that can lead and a view-change quorum; a group whose every
// replica is fenced stays without a primary (and never serves stale or
// short state).
func (r *Replica) Abdicate() { r.SetAbdicating(true) }

// SetAbdicating switches abdication on or off (the host calls it after
// every input with whether it can serve). While on, the replica never
// starts a view of its own: as the candidate that collected its
// view-change quorum it passes the view on (startView), and as the
// primary of its view, normal or collecting, it hands the view on at once.
func (r *Replica) SetAbdicating(on bool) {
	r.abdicating = on
	if !on || r.solo() || r.lastError != nil || r.restart.active || !r.isPrimaryOf(r.view) {
		return
	}
	if r.status == StatusNormal || r.status == StatusViewChange {
		defer r.assertInput(r.mark())
		r.abdications++
		r.startViewChange(r.view + 1)
	}
}

// Abdications counts the views this replica handed on (Abdicate).
func (r *Replica) Abdications() uint64 { return r.abdications }
