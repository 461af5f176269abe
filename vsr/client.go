package vsr

import "errors"

// Errors of Client.
var (
	// ErrClientBusy means a request is already outstanding.
	ErrClientBusy = errors.New("vsr: client has a request in flight")
	// ErrClientEvicted means the cluster evicted the client's session; the
	// client must be replaced by a new one with a new id.
	ErrClientEvicted = errors.New("vsr: client evicted")
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// ID is the client's unique id; it must not be zero.
	ID Uint128
	// Cluster is the cluster id.
	Cluster uint64
	// Group is the consensus group the client talks to.
	Group uint64
	// ReplicaCount is the number of replicas.
	ReplicaCount uint8
	// RequestTimeoutTicks is how long the client waits for a reply before
	// resending to the next replica.
	RequestTimeoutTicks uint64
}

// Client is the client side of the VSR session protocol as a pure, tick-
// driven state machine: it registers a session, numbers requests, keeps one
// request in flight, and on timeout resends it to the next replica. The
// simulator's workload and production client code drive it; it sends
// through send and learns of replies through OnMessage.
type Client struct {
	cfg     ClientConfig
	send    func(replica uint8, m *Message)
	session uint64
	// request is the number of the latest request sent (0 = register).
	request    uint64
	inflight   *Message
	userOp     *Message // queued behind a register
	view       uint64
	ticks      uint64
	attempt    uint64
	evicted    bool
	registered bool
}

// NewClient returns a client that sends through send.
func NewClient(cfg ClientConfig, send func(replica uint8, m *Message)) *Client {
	if cfg.RequestTimeoutTicks == 0 {
		cfg.RequestTimeoutTicks = 100
	}
	return &Client{cfg: cfg, send: send}
}

// ID returns the client id.
func (c *Client) ID() Uint128 { return c.cfg.ID }

// Session returns the session number (0 before registration).
func (c *Client) Session() uint64 { return c.session }

// Busy reports whether a request is outstanding.
func (c *Client) Busy() bool { return c.inflight != nil || c.userOp != nil }

// Evicted reports whether the cluster evicted this client.
func (c *Client) Evicted() bool { return c.evicted }

// Submit sends an operation (>= OperationUserMin). It registers the session
// first if needed. The reply arrives through OnMessage.
func (c *Client) Submit(operation uint8, body []byte) error {
	if c.evicted {
		return ErrClientEvicted
	}
	if c.Busy() {
		return ErrClientBusy
	}
	if operation < OperationUserMin {
		return ErrMessageInvalid
	}
	m := &Message{Header: Header{Command: CommandRequest, Cluster: c.cfg.Cluster, Group: c.cfg.Group, Client: c.cfg.ID, Operation: operation}, Body: append([]byte(nil), body...)}
	if !c.registered {
		c.userOp = m
		c.start(&Message{Header: Header{Command: CommandRequest, Cluster: c.cfg.Cluster, Group: c.cfg.Group, Client: c.cfg.ID, Operation: OperationRegister}})
		return nil
	}
	c.request++
	m.Request = c.request
	m.Session = c.session
	c.start(m)
	return nil
}

func (c *Client) start(m *Message) {
	c.inflight = m
	c.ticks = 0
	c.attempt = 0
	c.transmit()
}

func (c *Client) transmit() {
	m := c.inflight.Clone()
	target := PrimaryIndex(c.view+c.attempt%uint64(c.cfg.ReplicaCount), c.cfg.Group, c.cfg.ReplicaCount)
	m.Replica = target
	m.View = c.view
	m.Seal()
	c.send(target, m)
}

// Tick advances the request timeout and resends on expiry.
func (c *Client) Tick() {
	if c.inflight == nil {
		return
	}
	c.ticks++
	if c.ticks >= c.cfg.RequestTimeoutTicks {
		c.ticks = 0
		c.attempt++
		c.transmit()
	}
}

// OnMessage handles a message for this client. It returns the reply to the
// user request once it completes (nil otherwise), and ErrClientEvicted on
// eviction.
func (c *Client) OnMessage(m *Message) (*Message, error) {
	if m.Client != c.cfg.ID || m.Cluster != c.cfg.Cluster || m.Group != c.cfg.Group || !m.Valid() {
		return nil, nil
	}
	switch m.Command {
	case CommandEviction:
		if c.registered || c.inflight != nil {
			c.evicted = true
			c.inflight, c.userOp = nil, nil
			return nil, ErrClientEvicted
		}
	case CommandReply:
		if c.inflight == nil || m.Request != c.inflight.Request || m.Operation != c.inflight.Operation {
			return nil, nil
		}
		if m.Disposition != DispositionNone {
			// Not committed here: the request timeout resends it.
			return nil, nil
		}
		if m.View > c.view {
			c.view = m.View
		}
		c.attempt = 0
		if m.Operation == OperationRegister {
			c.session = m.Session
			c.registered = true
			c.inflight = nil
			if u := c.userOp; u != nil {
				c.userOp = nil
				c.request++
				u.Request = c.request
				u.Session = c.session
				c.start(u)
			}
			return nil, nil
		}
		c.inflight = nil
		return m, nil
	}
	return nil, nil
}
