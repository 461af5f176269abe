package group

import "github.com/stratabroker/strata/vsr"

// A host owes every submitted request one answer (PROTOCOL.md: 57, 58, 59
// and the rest, never a silent drop). vsr answers a request it refuses, a
// queued or prepared request it abandons in a view change, and a committed
// one; it does not answer a request whose primary stays in its view and
// cannot commit (a primary cut off from its backups keeps its view until
// it hears of the next one), nor the requests in its pipeline once its
// storage failed (it stops, Replica.Err). The host keeps a waiter for
// every submitted request and answers the ones vsr does not:
//
//   - a waiter that waited the request timeout (Config.RequestTimeoutTicks)
//     while the replica committed nothing is answered 57
//     (TransientNotCommitted: the outcome is not known, retry the same
//     request) and forgotten; vsr may still commit the op, once more than
//     the client retries it (at-least-once). A replica that commits keeps
//     its waiters however long they wait: the queue ahead of them is
//     bounded (the pipeline and the request queue), and every commit
//     moves it;
//   - a host whose replica failed answers every waiter 57 at once, and so
//     does one whose replica is no longer the primary: vsr abandons the
//     requests it queued and prepared as it leaves its view, but not one
//     whose op it knew committed and had not applied (Host.answerOrphans).
//
// A reply from vsr that finds no waiter is dropped: its request was
// answered already (it timed out), or was submitted to another replica of
// the group (a new primary committing the old primary's prepares replies
// for them too: the request numbers are each node's own, and the same
// number names another request here).

// waiter is a submitted request the host has not answered yet.
type waiter struct {
	client    vsr.Uint128
	request   uint64
	operation uint8
	// checksum is the request message's; vsr's answers carry it as
	// Context (a reply, or a disposition), so a waiter is never matched
	// by another node's request of the same client and number.
	checksum vsr.Uint128
	// since is the host's tick count when the request was submitted.
	since uint64
	// held: the committed reply is waiting for its sync ticket (Host.held).
	held bool
}

// WaitersMax bounds the requests a host keeps waiting for an answer; a
// request beyond it is answered DispositionOverloaded (58) at once. vsr
// bounds what it admits (the pipeline and the request queue), and every
// waiter is answered within the request timeout, so the bound is only
// reached by a binding that submits faster than that.
const WaitersMax = 1 << 14

// RequestTimeoutTicksDefault is the request timeout of a Config that
// sets none, in multiples of the replica's normal heartbeat timeout (the
// time after which the backups of a silent primary elect another): by
// then a primary that still has not committed a request is most likely
// cut off from its group.
const RequestTimeoutTicksDefault = 2

// waiterTable is a host's waiters in submission order.
type waiterTable struct {
	list []waiter
}

func (t *waiterTable) add(w waiter) { t.list = append(t.list, w) }

func (t *waiterTable) len() int { return len(t.list) }

// find returns the index of the first waiter of the request that client,
// request and checksum (vsr's Context) name, or -1.
func (t *waiterTable) find(client vsr.Uint128, request uint64, checksum vsr.Uint128) int {
	for i := range t.list {
		w := &t.list[i]
		if w.checksum == checksum && w.client == client && w.request == request {
			return i
		}
	}
	return -1
}

// findRequest returns the index of the first waiter of client's request,
// whatever its checksum, or -1 (the metadata plane: a duplicate's cached
// reply carries the checksum of the request that committed).
func (t *waiterTable) findRequest(client vsr.Uint128, request uint64) int {
	for i := range t.list {
		if w := &t.list[i]; w.client == client && w.request == request {
			return i
		}
	}
	return -1
}

// findClient returns the index of the first waiter of client, or -1.
func (t *waiterTable) findClient(client vsr.Uint128) int {
	for i := range t.list {
		if t.list[i].client == client {
			return i
		}
	}
	return -1
}

// remove forgets the waiter at i, keeping the order of the others.
func (t *waiterTable) remove(i int) {
	copy(t.list[i:], t.list[i+1:])
	t.list[len(t.list)-1] = waiter{}
	t.list = t.list[:len(t.list)-1]
}

// oldestSince returns the tick of the oldest waiter, if any.
func (t *waiterTable) oldestSince() (uint64, bool) {
	if len(t.list) == 0 {
		return 0, false
	}
	return t.list[0].since, true // in submission order
}

// takeExpired removes and returns the waiters submitted at or before
// deadline (a tick count), in submission order.
func (t *waiterTable) takeExpired(deadline uint64) []waiter {
	k := 0
	for k < len(t.list) && t.list[k].since <= deadline {
		k++
	}
	if k == 0 {
		return nil
	}
	out := append([]waiter(nil), t.list[:k]...)
	n := copy(t.list, t.list[k:])
	clear(t.list[n:])
	t.list = t.list[:n]
	return out
}

// takeUnheld removes and returns every waiter whose reply is not held
// for a sync, in submission order.
func (t *waiterTable) takeUnheld() []waiter {
	var out []waiter
	kept := t.list[:0]
	for _, w := range t.list {
		if w.held {
			kept = append(kept, w)
		} else {
			out = append(out, w)
		}
	}
	clear(t.list[len(kept):])
	t.list = kept
	return out
}
