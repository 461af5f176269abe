package connectors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/connectors/plugin"
)

// connector is one configured connector across its restarts.
type connector struct {
	rt       *Runtime
	kind     string
	key      string
	log      *zap.Logger
	counters *Counters

	// restartMu guards restarts: taken with TryLock, so two restarts of
	// one connector never run at once and a second request is dropped.
	restartMu sync.Mutex
	// lifecycleMu serializes start and stop (held across a launch).
	lifecycleMu sync.Mutex

	mu       sync.Mutex // guards the fields below
	cfg      *ConnectorConfig
	cfgErr   error
	version  uint64
	status   Status
	lastErr  string
	pluginID uint32
	// pid is the external plugin's process id (0 for built-ins).
	pid  int
	inst *instance
}

// instance is one run of a connector: one plugin id, one plugin, one
// broker client.
type instance struct {
	// stop ends the run in the documented order and waits (bounded by the
	// shutdown timeout).
	stop func()
	// done is closed when every task of the run has returned.
	done chan struct{}
}

// setStatus moves the connector to s, keeping the running gauges in step
// (they change only on transitions into or out of running).
func (c *connector) setStatusLocked(s Status, err error) {
	if c.status == s && err == nil {
		return
	}
	g := c.rt.metrics.sinksRunning
	if c.kind == KindSource {
		g = c.rt.metrics.sourcesRunning
	}
	if c.status == StatusRunning && s != StatusRunning {
		g.Dec()
	}
	if c.status != StatusRunning && s == StatusRunning {
		g.Inc()
	}
	c.status = s
	if err != nil {
		c.lastErr = err.Error()
	} else if s == StatusRunning {
		c.lastErr = ""
	}
}

// fail puts the connector in status Error (from a task of instance id)
// and counts the error. A failure of an old instance is ignored.
func (c *connector) fail(pluginID uint32, err error) {
	c.counters.Errors.add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pluginID != pluginID {
		return
	}
	c.log.Error("connector failed", zap.Uint32("plugin_id", pluginID), zap.Error(err))
	c.setStatusLocked(StatusError, err)
}

// start starts a run when the connector is enabled and has a valid config;
// otherwise it records why not. The launch (dial, plugin start and open)
// runs under lifecycleMu only, so the API can read the status meanwhile.
func (c *connector) start() {
	c.lifecycleMu.Lock()
	defer c.lifecycleMu.Unlock()
	c.mu.Lock()
	if c.inst != nil {
		c.mu.Unlock()
		return
	}
	if c.cfgErr != nil {
		c.counters.Errors.add(1)
		c.log.Error("connector config is invalid", zap.Error(c.cfgErr))
		c.setStatusLocked(StatusError, c.cfgErr)
		c.mu.Unlock()
		return
	}
	if !c.cfg.enabled() {
		c.setStatusLocked(StatusDisabled, nil)
		c.mu.Unlock()
		return
	}
	id, cfg, version := nextPluginID(), c.cfg, c.version
	c.pluginID, c.pid = id, 0
	c.setStatusLocked(StatusStarting, nil)
	c.mu.Unlock()

	inst, pid, err := c.launch(cfg, id)

	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.counters.Errors.add(1)
		c.log.Error("connector failed to start", zap.Uint32("plugin_id", id), zap.Error(err))
		c.setStatusLocked(StatusError, err)
		return
	}
	c.inst, c.pid = inst, pid
	if c.status == StatusError {
		// A task failed while the launch finished; the failure stands.
		return
	}
	c.setStatusLocked(StatusRunning, nil)
	c.log.Info("connector started", zap.Uint32("plugin_id", id), zap.Uint64("version", version))
}

// launch opens the plugin and starts the run's tasks; pid is the external
// plugin's process id (0 for a built-in).
func (c *connector) launch(cfg *ConnectorConfig, id uint32) (*instance, int, error) {
	pcfg, err := cfg.pluginConfigJSON()
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.rt.cfg.Plugins.CallTimeout.Duration)
	defer cancel()
	req := plugin.OpenRequest{ID: id, Key: cfg.Key, Config: pcfg, Verbose: cfg.Verbose}
	log := c.log.With(zap.Uint32("plugin_id", id))
	if c.kind == KindSource {
		store := NewStateStore(c.rt.cfg.State.Path, cfg.Key)
		if req.State, err = store.Load(); err != nil {
			return nil, 0, err
		}
		src, err := c.newSource(cfg, log)
		if err != nil {
			return nil, 0, err
		}
		inst, err := c.startSource(ctx, cfg, src, store, req, log)
		return inst, processID(src), err
	}
	snk, err := c.newSink(cfg, log)
	if err != nil {
		return nil, 0, err
	}
	inst, err := c.startSink(ctx, cfg, snk, req, log)
	return inst, processID(snk), err
}

// processID is the process id of an external plugin, else 0.
func processID(p any) int {
	if pp, ok := p.(*processPlugin); ok {
		return pp.Pid()
	}
	return 0
}

func (c *connector) newSource(cfg *ConnectorConfig, log *zap.Logger) (plugin.Source, error) {
	if cfg.Plugin != "" {
		f, err := lookupSource(cfg.Plugin)
		if err != nil {
			return nil, err
		}
		return f(), nil
	}
	return startProcessPlugin(cfg.Path, cfg.Args, KindSource, c.rt.cfg.Plugins.CallTimeout.Duration, log)
}

func (c *connector) newSink(cfg *ConnectorConfig, log *zap.Logger) (plugin.Sink, error) {
	if cfg.Plugin != "" {
		f, err := lookupSink(cfg.Plugin)
		if err != nil {
			return nil, err
		}
		return f(), nil
	}
	return startProcessPlugin(cfg.Path, cfg.Args, KindSink, c.rt.cfg.Plugins.CallTimeout.Duration, log)
}

// stop ends the current run, if any, and marks the connector stopped
// (an Error status is kept, so the failure stays visible).
func (c *connector) stop() {
	c.lifecycleMu.Lock()
	defer c.lifecycleMu.Unlock()
	c.mu.Lock()
	inst := c.inst
	c.inst = nil
	c.mu.Unlock()
	if inst != nil {
		inst.stop()
	}
	c.mu.Lock()
	if c.status != StatusError && c.status != StatusDisabled {
		c.setStatusLocked(StatusStopped, nil)
	}
	c.mu.Unlock()
}

// errRestartBusy reports a restart request dropped because one runs.
var errRestartBusy = errors.New("connectors: restart already in progress")

// restartWith stops the connector and starts it again, with a new config
// when e is not nil. A concurrent restart makes it return errRestartBusy.
func (c *connector) restartWith(e *ConfigEntry) error {
	if !c.restartMu.TryLock() {
		c.log.Info("restart skipped: another restart of this connector is running")
		return errRestartBusy
	}
	defer c.restartMu.Unlock()
	c.stop()
	c.mu.Lock()
	if e != nil {
		c.cfg, c.cfgErr, c.version = e.Config, e.Err, e.Version
	}
	c.status = statusAfterStop(c.status)
	c.mu.Unlock()
	c.start()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status == StatusError {
		return fmt.Errorf("restart %s %s: %s", c.kind, c.key, c.lastErr)
	}
	return nil
}

// statusAfterStop clears an Error before a new start (the gauge is not
// involved: neither status is running).
func statusAfterStop(s Status) Status {
	if s == StatusError {
		return StatusStopped
	}
	return s
}

func (c *connector) info(withConfig bool) ConnectorInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := ConnectorInfo{Key: c.key, Type: c.kind, Version: c.version, Status: c.status, PluginID: c.pluginID,
		ProcessID: c.pid, LastError: c.lastErr, Counters: c.counters.snapshot()}
	if c.cfg != nil {
		in.Name, in.Plugin, in.Path = c.cfg.Name, c.cfg.Plugin, c.cfg.Path
		if withConfig {
			in.Config = c.cfg.redacted()
		}
	}
	return in
}

// observe records one stage duration.
func (c *connector) observe(stage string, since time.Time) {
	c.counters.stages[stage].Observe(time.Since(since).Seconds())
}

// batchLog logs a per-batch line at info when the config is verbose,
// otherwise at debug.
func batchLog(log *zap.Logger, verbose bool, msg string, fields ...zap.Field) {
	if verbose {
		log.Info(msg, fields...)
	} else {
		log.Debug(msg, fields...)
	}
}
