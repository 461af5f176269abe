package connectors

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/stratabroker/strata/connectors/plugin"
)

// registry holds the built-in connectors by name.
var registry = struct {
	sync.RWMutex
	sources map[string]func() plugin.Source
	sinks   map[string]func() plugin.Sink
}{sources: map[string]func() plugin.Source{}, sinks: map[string]func() plugin.Sink{}}

// RegisterSource makes a built-in source available under name. It panics
// on a duplicate or nil factory (a programming error, like sql.Register).
func RegisterSource(name string, factory func() plugin.Source) {
	registry.Lock()
	defer registry.Unlock()
	if factory == nil {
		panic("connectors: RegisterSource factory is nil")
	}
	if _, dup := registry.sources[name]; dup {
		panic("connectors: RegisterSource called twice for " + name)
	}
	registry.sources[name] = factory
}

// RegisterSink makes a built-in sink available under name.
func RegisterSink(name string, factory func() plugin.Sink) {
	registry.Lock()
	defer registry.Unlock()
	if factory == nil {
		panic("connectors: RegisterSink factory is nil")
	}
	if _, dup := registry.sinks[name]; dup {
		panic("connectors: RegisterSink called twice for " + name)
	}
	registry.sinks[name] = factory
}

// Sources lists the registered built-in source names, sorted.
func Sources() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.sources))
	for n := range registry.sources {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Sinks lists the registered built-in sink names, sorted.
func Sinks() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.sinks))
	for n := range registry.sinks {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func lookupSource(name string) (func() plugin.Source, error) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.sources[name]
	if !ok {
		return nil, fmt.Errorf("%w: no source named %q", ErrUnknownPlugin, name)
	}
	return f, nil
}

func lookupSink(name string) (func() plugin.Sink, error) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.sinks[name]
	if !ok {
		return nil, fmt.Errorf("%w: no sink named %q", ErrUnknownPlugin, name)
	}
	return f, nil
}

// lastPluginID is the last plugin id handed out; ids start at 1 and are
// never reused in the life of the process.
var lastPluginID atomic.Uint32

// nextPluginID returns a fresh plugin id.
func nextPluginID() uint32 { return lastPluginID.Add(1) }
