package server

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/server/config"
)

// Reasons a connection is refused or closed by a limit, the reason label
// of strata_connections_closed_by_limit_total.
const (
	// limitConnectionsMax: refused at accept, [message_bus] connections_max.
	limitConnectionsMax = "connections_max"
	// limitUnauthenticatedSize: a frame over unauthenticated_max_message_size
	// before login, closed before its body was read.
	limitUnauthenticatedSize = "unauthenticated_max_message_size"
	// limitUnauthenticatedIdle: no request for unauthenticated_idle_timeout
	// before login.
	limitUnauthenticatedIdle = "unauthenticated_idle_timeout"
	// limitRequestRead: a request not read whole within request_read_timeout.
	limitRequestRead = "request_read_timeout"
	// limitInFlightBytes: the request budget stayed spent until the read
	// deadline, [message_bus] in_flight_bytes_max.
	limitInFlightBytes = "in_flight_bytes_max"
)

// limitLogInterval is how often each limit's log line is written at most;
// the line says how many more connections it stopped in between.
const limitLogInterval = 10 * time.Second

// errUnauthenticatedFrameSize is returned for a frame larger than an
// unbound connection may send.
var errUnauthenticatedFrameSize = errors.New("frame over the size allowed before login")

// connGuard holds the limits every client connection of the binary
// transports is subject to: the connection cap, the request budget and
// the per-transport timeouts, with the log and metric of what they stop.
type connGuard struct {
	// connectionsMax caps open connections (0: no cap); open counts them.
	connectionsMax int64
	open           atomic.Int64
	budget         *requestBudget
	tcp, ws, quic  transportLimits
	closed         *prometheus.CounterVec
	log            *zap.Logger

	logMu sync.Mutex
	// lastLogged and suppressed are per limit reason, guarded by logMu.
	lastLogged map[string]time.Time
	suppressed map[string]int
}

// transportLimits are one transport's connection limits ([tcp],
// [websocket] or [quic]).
type transportLimits struct {
	unauthenticatedFrameMax uint32
	unauthenticatedIdle     time.Duration
	requestRead             time.Duration
}

func limitsOf(l config.ClientLimits) transportLimits {
	return transportLimits{
		unauthenticatedFrameMax: uint32(l.UnauthenticatedMaxMessageSize),
		unauthenticatedIdle:     time.Duration(l.UnauthenticatedIdleTimeout),
		requestRead:             time.Duration(l.RequestReadTimeout),
	}
}

// newConnGuard builds the guard from the configuration and registers its
// metrics.
func (s *Server) newConnGuard() *connGuard {
	g := &connGuard{
		connectionsMax: int64(s.cfg.MessageBus.ConnectionsMax),
		budget:         newRequestBudget(int64(s.cfg.MessageBus.InFlightBytesMax), s.pool),
		tcp:            limitsOf(s.cfg.TCP.ClientLimits),
		ws:             limitsOf(s.cfg.WebSocket.ClientLimits),
		quic:           limitsOf(s.cfg.QUIC.ClientLimits),
		closed:         s.metrics.connectionsLimited,
		log:            s.log,
		lastLogged:     map[string]time.Time{},
		suppressed:     map[string]int{},
	}
	s.metrics.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "strata_request_budget_in_use_bytes", Help: "Bytes of request frame buffers lent under message_bus.in_flight_bytes_max.",
		}, func() float64 { return float64(g.budget.inUseBytes()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "strata_request_budget_waiting", Help: "Readers waiting for message_bus.in_flight_bytes_max.",
		}, func() float64 { return float64(g.budget.waitingCount()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "strata_request_budget_waits_total", Help: "Requests whose reader waited for message_bus.in_flight_bytes_max.",
		}, func() float64 { return float64(g.budget.waits.Load()) }),
	)
	// Every transport and limit has its series from the start, at 0, so a
	// dashboard's rate() sees the first closure (deploy/grafana).
	for _, transport := range []uint8{transportTCP, transportWebSocket, transportQUIC} {
		for _, limit := range []string{limitConnectionsMax, limitUnauthenticatedSize, limitUnauthenticatedIdle, limitRequestRead, limitInFlightBytes} {
			g.closed.WithLabelValues(transportName(transport), limit)
		}
	}
	return g
}

// limitsFor returns a transport's limits.
func (g *connGuard) limitsFor(transport uint8) transportLimits {
	switch transport {
	case transportWebSocket:
		return g.ws
	case transportQUIC:
		return g.quic
	}
	return g.tcp
}

// admit takes a connection slot, or reports (log and metric) that
// connections_max is reached; the caller then refuses the connection
// without serving it. Every admitted connection calls leave once.
func (g *connGuard) admit(transport uint8, address string) bool {
	if open := g.open.Add(1); g.connectionsMax > 0 && open > g.connectionsMax {
		g.open.Add(-1)
		g.stopped(transport, limitConnectionsMax, address, nil)
		return false
	}
	return true
}

// leave frees an admitted connection's slot.
func (g *connGuard) leave() { g.open.Add(-1) }

// stopped records a connection refused or closed by a limit: the metric
// always, the log line at most once per limitLogInterval and reason.
func (g *connGuard) stopped(transport uint8, reason, address string, err error) {
	g.closed.WithLabelValues(transportName(transport), reason).Inc()
	now := time.Now()
	g.logMu.Lock()
	if last, ok := g.lastLogged[reason]; ok && now.Sub(last) < limitLogInterval {
		g.suppressed[reason]++
		g.logMu.Unlock()
		return
	}
	more := g.suppressed[reason]
	g.lastLogged[reason], g.suppressed[reason] = now, 0
	g.logMu.Unlock()
	fields := []zap.Field{zap.String("limit", reason), zap.String("transport", transportName(transport)), zap.String("address", address),
		zap.Int("more_since_last_line", more)}
	if err != nil {
		fields = append(fields, zap.Error(err))
	}
	switch reason {
	case limitConnectionsMax:
		fields = append(fields, zap.String("connections_max", strconv.FormatInt(g.connectionsMax, 10)))
		g.log.Warn("connection refused: connection limit reached", fields...)
		return
	case limitInFlightBytes:
		g.log.Warn("connection closed: request budget spent until its read deadline", fields...)
		return
	}
	g.log.Info("connection closed by a limit", fields...)
}
