package group

import (
	"testing"

	"github.com/stratabroker/strata/vsr"
)

// TestWaiterTableBoundAndMatch: the table holds WaitersMax waiters and
// refuses the next (with a ticket all the same); an answer goes to the
// request being submitted before an older waiter of the same request, to
// the oldest otherwise, never to a waiter whose checksum differs (unless
// sessioned: a duplicate's cached reply carries the committed copy's
// checksum) nor to one whose reply is held.
func TestWaiterTableBoundAndMatch(t *testing.T) {
	client := vsr.Uint128{Lo: 9}
	a, b := vsr.Uint128{Lo: 1}, vsr.Uint128{Lo: 2}
	var tab waiterTable
	first, _ := tab.add(waiter{client: client, request: 5, checksum: a})
	second, _ := tab.add(waiter{client: client, request: 5, checksum: a})
	other, _ := tab.add(waiter{client: client, request: 5, checksum: b})
	if i := tab.match(client, 5, a); i < 0 || tab.list[i].ticket != first {
		t.Fatalf("match found %d, want the oldest waiter (ticket %d)", i, first)
	}
	tab.submitting = second
	if i := tab.match(client, 5, a); i < 0 || tab.list[i].ticket != second {
		t.Fatalf("match found %d, want the waiter being submitted (ticket %d)", i, second)
	}
	tab.submitting = 0
	if i := tab.match(client, 5, b); i < 0 || tab.list[i].ticket != other {
		t.Fatalf("match by checksum found %d, want ticket %d", i, other)
	}
	if i := tab.match(client, 5, vsr.Uint128{Lo: 3}); i >= 0 {
		t.Fatalf("a reply for another request of the same number matched waiter %d", i)
	}
	tab.list[tab.find(first)].held = true
	if i := tab.match(client, 5, a); i < 0 || tab.list[i].ticket != second {
		t.Fatalf("match found %d, want the oldest waiter not held (ticket %d)", i, second)
	}
	sessioned, _ := tab.add(waiter{client: client, request: 6, checksum: a, sessioned: true})
	if i := tab.match(client, 6, b); i < 0 || tab.list[i].ticket != sessioned {
		t.Fatalf("a sessioned waiter did not take its request's cached reply: %d", i)
	}
	for tab.len() < WaitersMax {
		if _, ok := tab.add(waiter{client: client, request: 7}); !ok {
			t.Fatalf("refused at %d waiters, below WaitersMax", tab.len())
		}
	}
	refused, ok := tab.add(waiter{client: client, request: 8})
	if ok || tab.len() != WaitersMax || refused != tab.last || tab.find(refused) >= 0 {
		t.Fatalf("the waiter past WaitersMax: ok %v, %d waiters, ticket %d", ok, tab.len(), refused)
	}
	if tab.next() != refused+1 {
		t.Fatalf("next ticket %d after %d", tab.next(), refused)
	}
	w := tab.take(tab.find(second))
	if w.ticket != second || tab.find(second) >= 0 || tab.find(other) < 0 {
		t.Fatalf("take: %+v", w)
	}
}
