package sim

import "fmt"

type clientRequest struct {
	client  uint64
	request uint64
}

// ExactlyOnceChecker checks that each client request is applied at most
// once: across every replica and the whole run, a (client, request) pair
// occupies at most one op of the committed log. Re-applying the same op on
// another replica, or on a replica that restarted, is not a violation.
type ExactlyOnceChecker struct {
	opOf      map[clientRequest]uint64
	violation error
}

// NewExactlyOnceChecker returns an empty checker.
func NewExactlyOnceChecker() *ExactlyOnceChecker {
	return &ExactlyOnceChecker{opOf: make(map[clientRequest]uint64)}
}

// OnApply records that op carries request of client.
func (c *ExactlyOnceChecker) OnApply(replica int, op, client, request uint64) {
	if c.violation != nil {
		return
	}
	k := clientRequest{client, request}
	if prev, ok := c.opOf[k]; ok && prev != op {
		c.violation = fmt.Errorf("client %d request %d applied twice: at op %d and (replica %d) at op %d", client, request, prev, replica, op)
		return
	}
	c.opOf[k] = op
}

// Check returns the first violation seen, or nil.
func (c *ExactlyOnceChecker) Check() error { return c.violation }
