package connectors

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/client"
)

// Status is a connector's lifecycle state.
type Status string

// The statuses. Running counts in the *_running gauges.
const (
	StatusStarting Status = "starting"
	StatusRunning  Status = "running"
	StatusStopped  Status = "stopped"
	StatusError    Status = "error"
	StatusDisabled Status = "disabled"
)

// stateDirMode is the permission of a state directory the runtime creates.
const stateDirMode = 0o700

// connectTimeout bounds dialing and logging in to the broker.
const connectTimeout = 10 * time.Second

// clientHeartbeatInterval is how often an idle broker connection pings,
// so a sink with a long poll_interval is not evicted from its group.
const clientHeartbeatInterval = 5 * time.Second

// Options configure a Runtime.
type Options struct {
	Config RuntimeConfig
	Logger *zap.Logger
	// Provider overrides the provider Config selects (tests).
	Provider Provider
	// Environ holds KEY=VALUE entries for per-connector overrides
	// (STRATA_CONNECTORS_SINK_{KEY}_...); nil means os.Environ().
	Environ []string
}

// Runtime hosts connectors. Start it, then Shutdown it.
type Runtime struct {
	cfg      RuntimeConfig
	log      *zap.Logger
	provider Provider
	environ  []string
	metrics  *Metrics

	mu         sync.Mutex
	connectors map[string]*connector // by kind/key

	httpSrv   *http.Server
	httpLn    net.Listener
	stopWatch chan struct{}
	watchDone chan struct{}
}

// New validates the configuration and creates the state directory. Its
// errors are fatal for strata-connect.
func New(opts Options) (*Runtime, error) {
	if err := opts.Config.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Config.State.Path, stateDirMode); err != nil {
		return nil, fmt.Errorf("%w: state directory %s: %w", ErrConfig, opts.Config.State.Path, err)
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	p := opts.Provider
	if p == nil {
		p = NewProvider(opts.Config.Connectors)
	}
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	return &Runtime{cfg: opts.Config, log: log, provider: p, environ: environ, metrics: newMetrics(), connectors: map[string]*connector{}}, nil
}

// Metrics returns the runtime's metrics (its registry backs /metrics).
func (r *Runtime) Metrics() *Metrics { return r.metrics }

// Start loads the connector configs, starts every enabled connector, the
// HTTP API (when enabled) and the config watcher. A provider failure is
// returned; a connector's failure is only that connector's status.
func (r *Runtime) Start(ctx context.Context) error {
	entries, err := r.load(ctx)
	if err != nil {
		return err
	}
	for _, name := range unmatchedConnectorVariables(r.environ, entries) {
		r.log.Warn("environment variable names no configured connector", zap.String("variable", name))
	}
	for _, e := range entries {
		c := r.addConnector(e)
		c.start()
	}
	if r.cfg.HTTP.Enabled {
		if err := r.startHTTP(); err != nil {
			return err
		}
	}
	if d := r.cfg.Connectors.PollInterval.Duration; d > 0 {
		r.stopWatch, r.watchDone = make(chan struct{}), make(chan struct{})
		go r.watch(d)
	}
	return nil
}

// load reads the provider and applies the environment overrides; a bad
// override is that connector's error.
func (r *Runtime) load(ctx context.Context) ([]ConfigEntry, error) {
	entries, err := r.provider.Load(ctx)
	if err != nil {
		return nil, err
	}
	for i := range entries {
		if e := &entries[i]; e.Err == nil {
			if err := e.Config.applyEnv(r.environ); err != nil {
				e.Err, e.Config = err, nil
			}
		}
	}
	return entries, nil
}

// addConnector registers the connector of e (or updates its config).
func (r *Runtime) addConnector(e ConfigEntry) *connector {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.connectors[e.id()]
	if !ok {
		c = &connector{rt: r, kind: e.Kind, key: e.Key, status: StatusStopped,
			counters: r.metrics.newCounters(e.Key, e.Kind),
			log:      r.log.With(zap.String("connector_key", e.Key), zap.String("connector_type", e.Kind))}
		r.connectors[e.id()] = c
		if e.Kind == KindSource {
			r.metrics.sourcesTotal.Inc()
		} else {
			r.metrics.sinksTotal.Inc()
		}
	}
	c.mu.Lock()
	c.cfg, c.cfgErr, c.version = e.Config, e.Err, e.Version
	c.mu.Unlock()
	return c
}

// watch re-reads the provider every interval and restarts connectors
// whose version changed; new connectors are started.
func (r *Runtime) watch(interval time.Duration) {
	defer close(r.watchDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-r.stopWatch:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), interval)
		err := r.Reload(ctx)
		cancel()
		if err != nil {
			r.log.Warn("reloading connector configs", zap.Error(err))
		}
	}
}

// Reload reads the provider once and applies changes: a connector whose
// version changed restarts with the new config (skipped, not queued, when
// a restart of it is already running), a new one starts, and one whose
// config disappeared is stopped (it stays listed, status stopped).
func (r *Runtime) Reload(ctx context.Context) error {
	entries, err := r.load(ctx)
	if err != nil {
		return err
	}
	present := make(map[string]bool, len(entries))
	for _, e := range entries {
		present[e.id()] = true
	}
	r.mu.Lock()
	var removed []*connector
	for id, c := range r.connectors {
		if !present[id] {
			removed = append(removed, c)
		}
	}
	r.mu.Unlock()
	for _, c := range removed {
		c.mu.Lock()
		running := c.inst != nil
		c.mu.Unlock()
		if running {
			c.log.Info("connector config removed, stopping")
			c.stop()
		}
	}
	for _, e := range entries {
		r.mu.Lock()
		c, ok := r.connectors[e.id()]
		r.mu.Unlock()
		if !ok {
			r.addConnector(e).start()
			continue
		}
		c.mu.Lock()
		changed := c.version != e.Version
		c.mu.Unlock()
		if !changed {
			continue
		}
		c.log.Info("connector config version changed, restarting", zap.Uint64("version", e.Version))
		if err := c.restartWith(&e); err != nil {
			c.log.Warn("restart after version change", zap.Error(err))
		}
	}
	return nil
}

// Restart stops and starts one connector (kind "source" or "sink"). It
// returns nil without restarting when a restart of it is already running.
func (r *Runtime) Restart(kind, key string) error {
	c, err := r.lookup(kind, key)
	if err != nil {
		return err
	}
	return c.restartWith(nil)
}

func (r *Runtime) lookup(kind, key string) (*connector, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.connectors[kind+"/"+key]
	if !ok {
		return nil, fmt.Errorf("%w: %s %s", ErrNotFound, kind, key)
	}
	return c, nil
}

// ConnectorInfo describes a connector for the API and /stats.
type ConnectorInfo struct {
	Key      string `json:"key"`
	Type     string `json:"type"`
	Name     string `json:"name,omitempty"`
	Plugin   string `json:"plugin,omitempty"`
	Path     string `json:"path,omitempty"`
	Version  uint64 `json:"version"`
	Status   Status `json:"status"`
	PluginID uint32 `json:"plugin_id"`
	// ProcessID is an external plugin's current process id.
	ProcessID int              `json:"process_id,omitempty"`
	LastError string           `json:"last_error,omitempty"`
	Counters  CounterSnapshot  `json:"counters"`
	Config    *ConnectorConfig `json:"config,omitempty"`
}

// Connectors lists every connector of kind ("" for all), sorted by key.
func (r *Runtime) Connectors(kind string) []ConnectorInfo {
	r.mu.Lock()
	cs := make([]*connector, 0, len(r.connectors))
	for _, c := range r.connectors {
		if kind == "" || c.kind == kind {
			cs = append(cs, c)
		}
	}
	r.mu.Unlock()
	out := make([]ConnectorInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.info(false))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type+out[i].Key < out[j].Type+out[j].Key })
	return out
}

// Connector returns one connector's details, config included.
func (r *Runtime) Connector(kind, key string) (ConnectorInfo, error) {
	c, err := r.lookup(kind, key)
	if err != nil {
		return ConnectorInfo{}, err
	}
	return c.info(true), nil
}

// Shutdown stops the watcher, the API and every connector (sources first,
// so their last batches still reach the stream).
func (r *Runtime) Shutdown(ctx context.Context) error {
	if r.stopWatch != nil {
		close(r.stopWatch)
		<-r.watchDone
		r.stopWatch = nil
	}
	var errs []error
	if r.httpSrv != nil {
		if err := r.httpSrv.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	r.mu.Lock()
	var sources, sinks []*connector
	for _, c := range r.connectors {
		if c.kind == KindSource {
			sources = append(sources, c)
		} else {
			sinks = append(sinks, c)
		}
	}
	r.mu.Unlock()
	for _, group := range [][]*connector{sources, sinks} {
		var wg sync.WaitGroup
		for _, c := range group {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.stop()
			}()
		}
		wg.Wait()
	}
	return errors.Join(errs...)
}

// dial connects and logs in to the broker for one connector instance.
func (r *Runtime) dial(ctx context.Context) (*client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	s := r.cfg.Strata
	opts := []client.Option{client.WithSDK("strata-connect", "0.1.0"),
		client.WithHeartbeat(clientHeartbeatInterval, func(err error) { r.log.Debug("heartbeat failed", zap.Error(err)) })}
	if s.Token != "" {
		opts = append(opts, client.WithToken(s.Token))
	} else {
		opts = append(opts, client.WithCredentials(s.Username, s.Password))
	}
	return client.Dial(ctx, s.Address, opts...)
}
