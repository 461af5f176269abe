package connectors

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/connectors/plugin"
)

// Limits of external plugin processes.
const (
	// pluginHelloTimeout bounds how long a started process may take to
	// send its Hello.
	pluginHelloTimeout = 10 * time.Second
	// pluginExitTimeout bounds the wait for a process to exit after Close
	// before it is killed.
	pluginExitTimeout = 5 * time.Second
	// pluginStderrLineMax bounds one forwarded stderr line.
	pluginStderrLineMax = 64 << 10
)

// reply is one frame (or read failure) from the plugin's stdout.
type reply struct {
	kind uint8
	body []byte
	err  error
}

// processPlugin runs an external connector executable and implements
// plugin.Source and plugin.Sink by exchanging frames with it. Calls are
// serialized (the protocol is lockstep). A call that gets no answer within
// callTimeout kills the process: a hung plugin costs its connector, never
// the runtime. Each start executes the file anew, so replacing the binary
// and restarting the connector picks up the new one.
type processPlugin struct {
	path        string
	args        []string
	kind        string
	callTimeout time.Duration
	log         *zap.Logger

	mu      sync.Mutex // serializes calls; guards the fields below
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies chan reply
	scratch []byte
	failed  error
	exited  chan struct{}
	waitErr error
}

// startProcessPlugin starts path and waits for a Hello of the right kind.
func startProcessPlugin(path string, args []string, kind string, callTimeout time.Duration, log *zap.Logger) (*processPlugin, error) {
	p := &processPlugin{path: path, args: args, kind: kind, callTimeout: callTimeout, log: log,
		replies: make(chan reply, 1), exited: make(chan struct{})}
	cmd := exec.Command(path, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPluginFailed, path, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPluginFailed, path, err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPluginFailed, path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start %s: %w", ErrPluginFailed, path, err)
	}
	p.cmd, p.stdin = cmd, stdin
	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() {
		defer pipes.Done()
		p.forwardStderr(stderr)
	}()
	go func() {
		defer pipes.Done()
		p.readReplies(stdout)
	}()
	go func() {
		pipes.Wait()
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	r, err := p.awaitLocked(pluginHelloTimeout)
	if err != nil {
		return nil, err
	}
	var hello plugin.Hello
	if r.kind != plugin.KindHello || json.Unmarshal(r.body, &hello) != nil {
		p.killLocked(fmt.Errorf("%w: %s: first frame is not a Hello", ErrPluginFailed, path))
		return nil, p.failed
	}
	if hello.Protocol != plugin.ProtocolVersion || hello.Type != kind {
		p.killLocked(fmt.Errorf("%w: %s: hello says protocol %d type %q, want %d %q", ErrPluginFailed, path, hello.Protocol, hello.Type, plugin.ProtocolVersion, kind))
		return nil, p.failed
	}
	return p, nil
}

// Pid is the process id (tests kill it to simulate a crash).
func (p *processPlugin) Pid() int { return p.cmd.Process.Pid }

func (p *processPlugin) forwardStderr(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), pluginStderrLineMax)
	for sc.Scan() {
		p.log.Info("plugin stderr", zap.String("line", sc.Text()))
	}
}

func (p *processPlugin) readReplies(r io.Reader) {
	fr := plugin.NewFrameReader(r)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			p.replies <- reply{err: err}
			return
		}
		p.replies <- reply{kind: f.Kind, body: append([]byte(nil), f.Body...)}
	}
}

// awaitLocked waits for the next reply, killing the process when none
// comes within timeout or the stream breaks.
func (p *processPlugin) awaitLocked(timeout time.Duration) (reply, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-p.replies:
		if r.err != nil {
			p.killLocked(fmt.Errorf("%w: %s: %s", ErrPluginFailed, p.path, p.describeExit(r.err)))
			return reply{}, p.failed
		}
		return r, nil
	case <-timer.C:
		p.killLocked(fmt.Errorf("%w: %s: no answer within %s, killed", ErrPluginFailed, p.path, timeout))
		return reply{}, p.failed
	}
}

// describeExit explains a broken reply stream, with the exit status when
// the process is gone.
func (p *processPlugin) describeExit(readErr error) string {
	select {
	case <-p.exited:
		return fmt.Sprintf("process exited (%v) while reading: %v", p.waitErr, readErr)
	case <-time.After(pluginExitTimeout):
		return fmt.Sprintf("reply stream broke: %v", readErr)
	}
}

// killLocked marks the plugin failed with err and kills the process.
func (p *processPlugin) killLocked(err error) {
	if p.failed == nil {
		p.failed = err
	}
	_ = p.stdin.Close()
	if kerr := p.cmd.Process.Kill(); kerr != nil && !errors.Is(kerr, exec.ErrWaitDelay) {
		p.log.Debug("kill plugin", zap.Error(kerr))
	}
}

// call sends a request and returns the reply; KindError replies become
// plain errors (the plugin lives on), anything else broken is
// ErrPluginFailed.
func (p *processPlugin) call(kind uint8, body any, timeout time.Duration) (reply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed != nil {
		return reply{}, p.failed
	}
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return reply{}, fmt.Errorf("plugin request: %w", err)
		}
	}
	var err error
	if p.scratch, err = plugin.WriteFrame(p.stdin, p.scratch, kind, raw); err != nil {
		p.killLocked(fmt.Errorf("%w: %s: write request: %w", ErrPluginFailed, p.path, err))
		return reply{}, p.failed
	}
	r, err := p.awaitLocked(timeout)
	if err != nil {
		return reply{}, err
	}
	if r.kind == plugin.KindError {
		var e plugin.ErrorBody
		if json.Unmarshal(r.body, &e) != nil {
			e.Message = string(r.body)
		}
		return reply{}, fmt.Errorf("plugin %s: %s", p.path, e.Message)
	}
	return r, nil
}

// expectOk checks a reply is KindOk.
func (p *processPlugin) expectOk(r reply, err error) error {
	if err != nil {
		return err
	}
	if r.kind != plugin.KindOk {
		p.mu.Lock()
		p.killLocked(fmt.Errorf("%w: %s: reply kind %d, want Ok", ErrPluginFailed, p.path, r.kind))
		p.mu.Unlock()
		return p.failed
	}
	return nil
}

// Open implements plugin.Source and plugin.Sink.
func (p *processPlugin) Open(_ context.Context, req plugin.OpenRequest) error {
	return p.expectOk(p.call(plugin.KindOpen, req, p.callTimeout))
}

// Poll implements plugin.Source. The context is not used to abandon a
// call: an abandoned reply would desynchronize the lockstep stream, so the
// call timeout bounds it instead.
func (p *processPlugin) Poll(context.Context) (plugin.ProducedBatch, error) {
	r, err := p.call(plugin.KindPoll, nil, p.callTimeout)
	if err != nil {
		return plugin.ProducedBatch{}, err
	}
	var b plugin.ProducedBatch
	if r.kind != plugin.KindBatch || json.Unmarshal(r.body, &b) != nil {
		p.mu.Lock()
		p.killLocked(fmt.Errorf("%w: %s: bad poll reply (kind %d)", ErrPluginFailed, p.path, r.kind))
		p.mu.Unlock()
		return b, p.failed
	}
	return b, nil
}

// Report implements plugin.Source.
func (p *processPlugin) Report(_ context.Context, res plugin.BatchResult) error {
	return p.expectOk(p.call(plugin.KindReport, res, p.callTimeout))
}

// Consume implements plugin.Sink.
func (p *processPlugin) Consume(_ context.Context, b plugin.SinkBatch) error {
	return p.expectOk(p.call(plugin.KindConsume, b, p.callTimeout))
}

// Close asks the plugin to close, then waits for the process to exit
// (killing it after pluginExitTimeout).
func (p *processPlugin) Close(context.Context) error {
	var err error
	p.mu.Lock()
	alive := p.failed == nil
	p.mu.Unlock()
	if alive {
		err = p.expectOk(p.call(plugin.KindClose, nil, p.callTimeout))
	}
	p.mu.Lock()
	_ = p.stdin.Close()
	p.mu.Unlock()
	select {
	case <-p.exited:
	case <-time.After(pluginExitTimeout):
		p.mu.Lock()
		p.killLocked(fmt.Errorf("%w: %s: did not exit after close", ErrPluginFailed, p.path))
		p.mu.Unlock()
		<-p.exited
	}
	return err
}

// kill ends the process at once (a stop that ran out of time); calls in
// flight fail with ErrPluginFailed.
func (p *processPlugin) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
}

// killPlugin kills p when it is an external process.
func killPlugin(p any) {
	if pp, ok := p.(*processPlugin); ok {
		pp.kill()
	}
}
