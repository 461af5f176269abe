// Package server is the Strata broker: it accepts client connections,
// speaks the protocol of net/wire, sequences every state change as an
// operation through the deterministic state machines of server/metadata and
// server/partition, and keeps their state on disk through storage.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quic-go/quic-go"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/iofs"
	"github.com/stratabroker/strata/runtime/pool"
	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/storage"
)

// httpReadHeaderTimeout bounds how long an HTTP client may take to send
// its request headers.
const httpReadHeaderTimeout = 10 * time.Second

// tlsHandshakeGrace bounds a TLS handshake (PROTOCOL.md §9).
const tlsHandshakeGrace = 10 * time.Second

// Pause after an accept that failed for want of file descriptors,
// doubling while it keeps failing.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// Version is the server version string reported to clients.
const Version = wire.ServerVersion

// ErrClosed is returned by Done's channel after a Shutdown.
var ErrClosed = errors.New("server closed")

// RootCredentials name the root user created at the first boot. An empty
// password makes the server generate one and print it once.
type RootCredentials struct {
	Username string
	Password string
}

// Options configure a Server.
type Options struct {
	Config *config.Config
	Logger *zap.Logger
	Root   RootCredentials
	// FS is the file system the broker's data lives on; nil means the
	// operating system's.
	FS storage.FS
	// Now is the wall clock; nil means time.Now. Tests may pin it.
	Now func() time.Time
	// HTTP builds the handler served on the [http] listener (the REST API
	// and /metrics) when http.enabled; nil serves nothing there.
	HTTP func(*Server) (http.Handler, error)
	// Cluster makes the server one replica of a cluster (replica_plane.go);
	// the zero value is a single node.
	Cluster ClusterOptions
}

// Server is one single-node Strata broker.
type Server struct {
	cfg *config.Config
	log *zap.Logger
	fs  storage.FS
	// engine is the IO engine in use ("uring", "sync" or "injected").
	engine string
	// shardFS[i] is shard i's IO engine: a ring that shard's tasks drive
	// themselves (io_uring), or the shared FS. Partitions do all their
	// file IO through their owner's, the metadata journal through shard
	// 0's.
	shardFS []storage.FS
	// shardRings is set when every shard has a ring of its own.
	shardRings bool
	// superblocks is the node's superblock file: the superblock zone of
	// every partition group, in slots (sbfile.go).
	superblocks *superblockStore
	now         func() time.Time

	startedAt time.Time
	metrics   *metrics

	// meta serialises every metadata operation and guards the metadata
	// state machine; reads take its read lock.
	meta *metaStore
	// parts holds the partition runtimes.
	parts *partitionSet
	// shards own the partitions: each partition's state and files are
	// touched only by tasks on its shard (DESIGN.md decision 9).
	shards []*shard.Shard
	plan   shard.Plan
	// clientShards is the rotation new connections are handed to (every
	// shard, or all but shard 0 with skip_shard_zero_for_clients);
	// nextClientShard counts connections handed out.
	clientShards    []*shard.Shard
	nextClientShard atomic.Uint32
	// pool lends the connections' frame and reply buffers
	// ([system.memory_pool]); nil when disabled.
	pool *pool.Pool
	// guard holds the client connections' limits (conn_limits.go).
	guard *connGuard

	// loginHint is printed at boot (how to log in).
	loginHint string

	mu        sync.Mutex
	listeners []net.Listener
	conns     map[uint32]*connection
	closed    bool
	done      chan error
	wg        sync.WaitGroup

	nextConnID atomic.Uint32
	tcpAddr    net.Addr
	httpAddr   net.Addr
	// bound is every address a listener is bound to, filled in as Start
	// binds them (GetClusterMetadata advertises exactly these).
	bound        config.Bound
	httpServer   *http.Server
	httpNew      func(*Server) (http.Handler, error)
	wsServer     *http.Server
	quicListener *quic.Listener
	// logins limits failed logins per address and username ([login]).
	logins *LoginLimiter
	// passwordVerifications counts password hashes computed (password.go).
	passwordVerifications prometheus.Counter
	// groupPollMu orders group polls (read side: fence, poll, record what
	// was served) against joins (write side: in-flight computation and
	// commit). Taken before the metadata lock.
	groupPollMu sync.RWMutex
	// sweepMu serialises heartbeat sweeps of group members
	// (groups_heartbeat.go).
	sweepMu sync.Mutex
	// groupState is the consumer groups' non-replicated bookkeeping.
	groupState *groupRuntime
	// stopVerifier ends the heartbeat verifier.
	stopVerifier context.CancelFunc
	// snapshotMu lets one GetSnapshot archive be built at a time.
	snapshotMu sync.Mutex
	// partitionOpObserver sees every partition operation applied (a test
	// hook, partition_submit.go); unset in production.
	partitionOpObserver partitionOpObserver
	// transferServeHook sees every chunk of a segment transfer this
	// server serves, before it leaves (a test hook, partition_transfer.go);
	// unset in production.
	transferServeHook atomic.Pointer[func(chunk []byte)]
	// cluster is the replica plane's configuration; replicaStop ends its
	// ticker, which closes replicaStopped (replica_plane.go).
	cluster                     ClusterOptions
	replicaStop, replicaStopped chan struct{}
	// plane is the replica plane's tick schedules and announcements
	// (replica_ticks.go).
	plane replicaPlane
}

// New opens (or creates) the data directory, recovers the metadata and
// every partition, and bootstraps the root user on the first boot. It
// binds nothing: call Start.
func New(opts Options) (srv *Server, err error) {
	if opts.Config == nil {
		return nil, fmt.Errorf("%w: no configuration", config.ErrInvalid)
	}
	if err := opts.Cluster.check(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	fs := opts.FS
	engine := "injected"
	if fs == nil {
		fs, engine, err = iofs.Select(opts.Config.System.IO.Engine, ringConfig(opts.Config), func(line string) { log.Warn(line) })
		if err != nil {
			return nil, fmt.Errorf("%w: system.io.engine: %v", config.ErrInvalid, err)
		}
		// A ring the server set up is closed again if it does not start.
		defer func() {
			if closer, ok := fs.(io.Closer); ok && srv == nil {
				err = errors.Join(err, closer.Close())
			}
		}()
	}
	log.Info("io engine", zap.String("engine", engine))
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{
		cfg:       opts.Config,
		log:       log,
		fs:        fs,
		engine:    engine,
		now:       now,
		startedAt: now(),
		metrics:   newMetrics(),
		conns:     map[uint32]*connection{},
		done:      make(chan error, 1),
		httpNew:   opts.HTTP,
		cluster:   opts.Cluster,
	}
	s.groupState = newGroupRuntime()
	if mp := opts.Config.System.MemoryPool; mp.Enabled {
		p, err := pool.New(pool.Config{BudgetBytes: int64(mp.Size), BucketBuffersMax: int(mp.BucketCapacity)})
		if err != nil {
			return nil, fmt.Errorf("%w: system.memory_pool: %v", config.ErrInvalid, err)
		}
		s.pool = p
		s.registerPoolMetrics()
	}
	s.guard = s.newConnGuard()
	s.logins = NewLoginLimiter(LoginLimitsFrom(opts.Config.Login), now)
	s.registerLoginMetrics()
	root := s.cfg.System.Path
	for _, dir := range []string{root, filepath.Join(root, "metadata"), filepath.Join(root, "runtime"), filepath.Join(root, "state"), filepath.Join(root, "streams")} {
		if err := fs.MkdirAll(dir); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	if err := writeFileIfMissing(fs, filepath.Join(root, "state", "log"), nil); err != nil {
		return nil, err
	}
	if err := s.startShards(); err != nil {
		return nil, err
	}
	if s.superblocks, err = openSuperblockStore(fs, root, s.shards, s.shardFS, log); err != nil {
		s.stopShards()
		return nil, err
	}
	s.parts = newPartitionSet(s)
	meta, err := openMetaStore(s)
	if err != nil {
		s.stopShards()
		return nil, err
	}
	s.meta = meta
	s.registerInfoMetrics()
	if err := s.parts.openAll(); err != nil {
		_ = s.meta.close()
		s.stopShards()
		return nil, err
	}
	if err := s.bootstrapRoot(opts.Root); err != nil {
		_ = s.parts.closeAll()
		_ = s.meta.close()
		s.stopShards()
		return nil, err
	}
	return s, nil
}

// Start binds the configured listeners and starts serving, and rewrites
// runtime/current_config.toml with the bound addresses.
func (s *Server) Start() error {
	bound := config.Bound{}
	if s.cfg.TCP.Enabled {
		ln, err := s.listenOnShardZero("tcp", s.cfg.TCP.Address)
		if err != nil {
			return fmt.Errorf("bind tcp %s: %w", s.cfg.TCP.Address, err)
		}
		if s.cfg.TCP.TLS.Enabled {
			tlsConf, err := serverTLSConfig(s.cfg.TCP.TLS)
			if err != nil {
				_ = ln.Close()
				return fmt.Errorf("tcp: %w", err)
			}
			ln = tls.NewListener(ln, tlsConf)
		}
		s.mu.Lock()
		s.listeners = append(s.listeners, ln)
		s.tcpAddr = ln.Addr()
		s.mu.Unlock()
		bound.TCP = ln.Addr().String()
		s.setBound(bound)
		s.wg.Add(1)
		go s.acceptLoop(ln, transportTCP)
		s.log.Info("listening", zap.String("transport", "tcp"), zap.String("address", bound.TCP))
	}
	if s.cfg.WebSocket.Enabled {
		if err := s.startWebSocket(&bound.WebSocket); err != nil {
			return err
		}
		s.setBound(bound)
	}
	if s.cfg.QUIC.Enabled {
		if err := s.startQUIC(&bound.QUIC); err != nil {
			return err
		}
		s.setBound(bound)
	}
	if s.cfg.HTTP.Enabled && s.httpNew != nil {
		if err := s.startHTTP(&bound); err != nil {
			return err
		}
		s.setBound(bound)
	}
	s.startReplicaPlane()
	verifierCtx, stopVerifier := context.WithCancel(context.Background())
	s.mu.Lock()
	s.stopVerifier = stopVerifier
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.runHeartbeatVerifier(verifierCtx)
	}()
	s.wg.Add(1)
	go func() { // stopped with the verifier
		defer s.wg.Done()
		s.runMemoryRelease(verifierCtx)
	}()
	current, err := config.EncodeCurrent(s.cfg, bound)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(s.fs, filepath.Join(s.cfg.System.Path, "runtime", "current_config.toml"), current); err != nil {
		return err
	}
	return nil
}

// listenOnShardZero binds a listener from a task on shard 0, the shard
// that owns the listeners (the accepted connections are handed to the
// client shards).
func (s *Server) listenOnShardZero(network, address string) (net.Listener, error) {
	var ln net.Listener
	var err error
	if callErr := s.shards[0].Call(func() { ln, err = net.Listen(network, address) }); callErr != nil {
		return nil, callErr
	}
	return ln, err
}

// acceptLoop accepts connections until the listener closes. A
// connection past [message_bus] connections_max is closed at once.
func (s *Server) acceptLoop(ln net.Listener, transport uint8) {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ECONNABORTED) {
				// Out of file descriptors (or a connection reset in the
				// backlog): not fatal, connections close and free them.
				backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
				s.log.Warn("accept failed, retrying", zap.Duration("in", backoff), zap.Error(err))
				time.Sleep(backoff)
				continue
			}
			s.log.Error("accept failed", zap.Error(err))
			select {
			case s.done <- fmt.Errorf("accept: %w", err):
			default:
			}
			return
		}
		backoff = 0
		if !s.guard.admit(transport, nc.RemoteAddr().String()) {
			_ = nc.Close()
			continue
		}
		if tcp, ok := nc.(*net.TCPConn); ok {
			_ = tcp.SetNoDelay(true)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.guard.leave()
			if tlsConn, ok := nc.(*tls.Conn); ok {
				// Handshake before serving so a plaintext client fails at
				// once, within the handshake grace of PROTOCOL.md §9.
				_ = tlsConn.SetDeadline(time.Now().Add(tlsHandshakeGrace))
				if err := tlsConn.Handshake(); err != nil {
					s.log.Debug("tls handshake failed", zap.String("address", nc.RemoteAddr().String()), zap.Error(err))
					_ = nc.Close()
					return
				}
				_ = tlsConn.SetDeadline(time.Time{})
			}
			s.serveConn(nc, transport)
		}()
	}
}

// startHTTP binds the [http] listener and serves the handler on it.
func (s *Server) startHTTP(bound *config.Bound) error {
	handler, err := s.httpNew(s)
	if err != nil {
		return fmt.Errorf("http handler: %w", err)
	}
	ln, err := s.listenOnShardZero("tcp", s.cfg.HTTP.Address)
	if err != nil {
		return fmt.Errorf("bind http %s: %w", s.cfg.HTTP.Address, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: httpReadHeaderTimeout}
	if s.cfg.HTTP.TLS.Enabled {
		tlsConf, err := serverTLSConfig(s.cfg.HTTP.TLS)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("http: %w", err)
		}
		tlsConf.NextProtos = []string{"h2", "http/1.1"}
		ln = tls.NewListener(ln, tlsConf)
	}
	s.mu.Lock()
	s.httpAddr = ln.Addr()
	s.httpServer = srv
	s.mu.Unlock()
	bound.HTTP = ln.Addr().String()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("http server failed", zap.Error(err))
		}
	}()
	s.log.Info("listening", zap.String("transport", "http"), zap.String("address", bound.HTTP))
	return nil
}

// HTTPAddr is the bound HTTP address (nil when HTTP is off).
func (s *Server) HTTPAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.httpAddr
}

// MetricsRegistry is the registry holding the server's Prometheus
// collectors, for the /metrics endpoint.
func (s *Server) MetricsRegistry() *prometheus.Registry { return s.metrics.registry }

// Logger is the server's logger, for components that serve on its behalf.
func (s *Server) Logger() *zap.Logger { return s.log }

// TCPAddr is the bound TCP address (nil before Start).
func (s *Server) TCPAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tcpAddr
}

// LoginHint says how to log in, for the boot banner.
func (s *Server) LoginHint() string { return s.loginHint }

// Done delivers a fatal serving error; after Shutdown it is never written.
func (s *Server) Done() <-chan error { return s.done }

// addConn registers a live connection.
func (s *Server) addConn(c *connection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[c.id] = c
	s.metrics.connections.Inc()
	s.metrics.connectionsByTr.WithLabelValues(transportName(c.transport)).Inc()
	if c.shard != nil {
		s.metrics.shardConnections.WithLabelValues(strconv.Itoa(c.shard.ID())).Inc()
	}
}

// removeConn forgets a closed connection and ends its session.
func (s *Server) removeConn(c *connection) {
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
	s.metrics.connections.Dec()
	s.metrics.connectionsByTr.WithLabelValues(transportName(c.transport)).Dec()
	if c.shard != nil {
		s.metrics.shardConnections.WithLabelValues(strconv.Itoa(c.shard.ID())).Dec()
	}
	if bound, _, client, _ := c.binding(); bound {
		s.meta.releaseSession(client, c.id)
		s.releaseGroupMemberships(client)
	}
}

// connectionsSnapshot lists the live connections in ascending id order.
func (s *Server) connectionsSnapshot() []*connection {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*connection, 0, len(s.conns))
	for _, c := range s.conns {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Shutdown stops accepting, closes every connection, flushes every
// partition and closes the data files. It is safe to call more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	listeners := s.listeners
	s.listeners = nil
	httpServer, wsServer, quicListener := s.httpServer, s.wsServer, s.quicListener
	if s.stopVerifier != nil {
		s.stopVerifier()
	}
	conns := make([]*connection, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, ln := range listeners {
		_ = ln.Close()
	}
	if httpServer != nil {
		_ = httpServer.Shutdown(ctx)
	}
	if quicListener != nil {
		_ = quicListener.Close()
	}
	if wsServer != nil {
		_ = wsServer.Close()
	}
	for _, c := range conns {
		c.close()
	}
	s.stopReplicaPlane()
	waited := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-ctx.Done():
		return fmt.Errorf("shutdown: %w", ctx.Err())
	}
	var errs []error
	if err := s.parts.closeAll(); err != nil {
		errs = append(errs, err)
	}
	// The journal's IO runs on shard 0: close it while the shards run.
	if err := s.meta.close(); err != nil {
		errs = append(errs, err)
	}
	s.stopShards()
	if closer, ok := s.fs.(io.Closer); ok {
		if err := closer.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// startShards plans the shards from [system.sharding] and starts them.
func (s *Server) startShards() error {
	sharding := s.cfg.System.Sharding
	plan, err := shard.PlanFromSetting(sharding.CPUAllocation, shard.SysfsRootDefault, sharding.PinCores)
	if err != nil {
		return fmt.Errorf("%w: system.sharding.cpu_allocation: %v", config.ErrInvalid, err)
	}
	shardFS, pollers, err := s.shardEngines(plan.Shards())
	if err != nil {
		return err
	}
	shards, err := shard.StartPlan(plan, shard.Config{Unlocked: !plan.Pin}, pollers)
	if err != nil {
		return errors.Join(fmt.Errorf("start shards: %w", err), closeShardEngines(shardFS))
	}
	s.plan, s.shards, s.shardFS = plan, shards, shardFS
	s.clientShards = clientShardRotation(shards, sharding.SkipShardZeroForClients)
	s.registerShardMetrics()
	clients := make([]int, len(s.clientShards))
	for i, sh := range s.clientShards {
		clients[i] = sh.ID()
	}
	s.log.Info("shards", zap.Int("count", plan.Shards()), zap.Bool("pinned", plan.Pin), zap.String("cpus", plan.String()), zap.Ints("client_shards", clients), zap.String("io", s.shardIODescription()))
	return nil
}

// stopShards stops every shard after its queued tasks ran, then closes
// the shards' own rings.
func (s *Server) stopShards() {
	if s.superblocks != nil {
		// Each shard's handle of the superblock file is closed on it.
		for i, sh := range s.shards {
			if err := sh.Call(func() { s.superblocks.closeShard(i) }); err != nil {
				s.log.Error("closing the superblock file", zap.Int("shard", i), zap.Error(err))
			}
		}
	}
	for _, sh := range s.shards {
		sh.Stop()
	}
	if err := closeShardEngines(s.shardFS); err != nil {
		s.log.Error("closing the shards' io engines", zap.Error(err))
	}
}

// ringConfig sizes the io_uring rings from [system.io].
func ringConfig(cfg *config.Config) uring.Config {
	return uring.Config{Entries: int(cfg.System.IO.RingEntries), EventInterval: int(cfg.System.IO.RingEventInterval)}
}

// newShardRing sets up a shard's ring (a variable so tests can make it
// fail).
var newShardRing = iofs.NewDirect

// shardIODescription names the shards' IO engine for the boot log.
func (s *Server) shardIODescription() string {
	switch {
	case s.shardRings:
		return "one io_uring per shard, driven by the shard"
	case s.engine == iofs.EngineUring:
		return "one shared io_uring"
	}
	return s.engine
}

// shardEngines gives every shard its IO engine: with io_uring, a ring of
// its own that its tasks submit to and wait on themselves (no hand-off to
// another thread), polled by its event loop; otherwise the shared FS.
func (s *Server) shardEngines(count int) ([]storage.FS, func(int) shard.Poller, error) {
	shardFS := make([]storage.FS, count)
	if s.engine != iofs.EngineUring {
		for i := range shardFS {
			shardFS[i] = s.fs
		}
		return shardFS, nil, nil
	}
	cfg := ringConfig(s.cfg)
	rings := make([]*iofs.FS, count)
	for i := range rings {
		ring, err := newShardRing(cfg)
		if err != nil {
			err = errors.Join(fmt.Errorf("shard %d io_uring: %w", i, err), closeShardEngines(shardFS[:i]))
			if engine := s.cfg.System.IO.Engine; engine != iofs.EngineAuto && engine != "" {
				return nil, nil, err
			}
			// auto: the probe's small ring worked but the shards' did not
			// (locked-memory limits, for one): every shard shares the FS.
			s.log.Warn("io engine: the shards run on the shared ring; a ring per shard failed", zap.Error(err))
			for j := range shardFS {
				shardFS[j] = s.fs
			}
			return shardFS, nil, nil
		}
		rings[i], shardFS[i] = ring, ring
	}
	s.shardRings = true
	return shardFS, func(i int) shard.Poller { return rings[i] }, nil
}

// closeShardEngines closes the shards' own rings (after the shards have
// stopped: a ring is closed by the goroutine that last used it, or once
// that one has exited).
func closeShardEngines(shardFS []storage.FS) error {
	var errs []error
	for _, fsys := range shardFS {
		if ring, ok := fsys.(*iofs.FS); ok {
			errs = append(errs, ring.Close())
		}
	}
	return errors.Join(errs...)
}

// shardFor returns the shard that owns partition k: the namespace hash of
// DESIGN.md decision 9.
func (s *Server) shardFor(k partKey) *shard.Shard {
	i, err := shard.ShardOf(k.stream, k.topic, k.partition, len(s.shards))
	if err != nil {
		// Ids beyond the namespace cannot be created; keep serving.
		s.log.Warn("partition outside the routing namespace; using shard 0", zap.Error(err))
		i = 0
	}
	return s.shards[i]
}

// PartitionShard reports which shard owns a partition (for tests and
// operators).
func (s *Server) PartitionShard(stream, topic, partition uint32) int {
	return s.shardFor(partKey{stream, topic, partition}).ID()
}

// Shards is the number of shards.
func (s *Server) Shards() int { return len(s.shards) }

// nowMicros is the wall clock in microseconds since the Unix epoch.
func (s *Server) nowMicros() uint64 { return uint64(s.now().UnixMicro()) }
