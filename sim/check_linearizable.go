package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/anishathalye/porcupine"
)

// logState is an immutable replicated-log state for porcupine: a cons list
// of values, newest first, with its length and a rolling hash.
type logState struct {
	length int
	hash   uint64
	value  uint64
	prev   *logState
}

func (s *logState) append(v uint64) *logState {
	n := &logState{prev: s, value: v, length: 1, hash: v*0x9e3779b97f4a7c15 + 1}
	if s != nil {
		n.length = s.length + 1
		n.hash = (s.hash^v)*0x100000001b3 + uint64(n.length)
	}
	return n
}

func (s *logState) len() int {
	if s == nil {
		return 0
	}
	return s.length
}

// at returns the value at position (which must be < len).
func (s *logState) at(position int) uint64 {
	for n := s; n != nil; n = n.prev {
		if n.length == position+1 {
			return n.value
		}
	}
	panic("sim: logState.at out of range")
}

type linInput struct {
	kind     HistoryKind
	argument uint64
}

type linOutput struct {
	known    bool // false for an append that never got a response
	position uint64
	found    bool
	value    uint64
}

// replicatedLogModel is the sequential specification of the replicated log.
var replicatedLogModel = porcupine.Model{
	Init: func() interface{} { return (*logState)(nil) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s := state.(*logState)
		in := input.(linInput)
		out := output.(linOutput)
		switch in.kind {
		case HistoryAppend:
			if out.known && out.position != uint64(s.len()) {
				return false, s
			}
			return true, s.append(in.argument)
		default:
			exists := in.argument < uint64(s.len())
			if out.found != exists {
				return false, s
			}
			if exists && s.at(int(in.argument)) != out.value {
				return false, s
			}
			return true, s
		}
	},
	Equal: func(a, b interface{}) bool {
		x, y := a.(*logState), b.(*logState)
		for x != nil && y != nil {
			if x == y {
				return true
			}
			if x.length != y.length || x.hash != y.hash || x.value != y.value {
				return false
			}
			x, y = x.prev, y.prev
		}
		return x == nil && y == nil
	},
	Hash: func(state interface{}) uint64 {
		s := state.(*logState)
		if s == nil {
			return 0
		}
		return s.hash
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(linInput)
		out := output.(linOutput)
		if in.kind == HistoryAppend {
			if !out.known {
				return fmt.Sprintf("append(%d) -> ?", in.argument)
			}
			return fmt.Sprintf("append(%d) -> %d", in.argument, out.position)
		}
		if !out.found {
			return fmt.Sprintf("read(%d) -> absent", in.argument)
		}
		return fmt.Sprintf("read(%d) -> %d", in.argument, out.value)
	},
	DescribeState: func(state interface{}) string {
		s := state.(*logState)
		if s == nil {
			return "[]"
		}
		return fmt.Sprintf("[%d values, last %d]", s.length, s.value)
	},
}

// porcupineHistory converts the run's history. Reads without a response
// are left out (they changed nothing); appends without one may have taken
// effect at any later time, so they stay open to the end.
func porcupineHistory(h *History) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(h.Entries))
	for i := range h.Entries {
		e := &h.Entries[i]
		if !e.Completed && e.Kind == HistoryRead {
			continue
		}
		op := porcupine.Operation{
			ClientId: e.Client,
			Input:    linInput{kind: e.Kind, argument: e.Argument},
			Call:     e.CallTime,
			Return:   math.MaxInt64,
			Output:   linOutput{},
		}
		if e.Completed {
			op.Return = e.ReturnTime
			op.Output = linOutput{known: true, position: e.Position, found: e.Found, value: e.Value}
		}
		ops = append(ops, op)
	}
	return ops
}

// LinearizabilityChecker checks the client history against the replicated
// log's sequential specification with porcupine. The check runs once, after
// the run; porcupine's own worker goroutines never touch the simulation.
type LinearizabilityChecker struct {
	info   porcupine.LinearizationInfo
	failed bool
}

// Check returns an error if the history is not linearizable.
func (c *LinearizabilityChecker) Check(h *History) error {
	result, info := porcupine.CheckOperationsVerbose(replicatedLogModel, porcupineHistory(h), 0)
	c.info = info
	if result != porcupine.Ok {
		c.failed = true
		return fmt.Errorf("client history of %d operations is not linearizable (%s)", len(h.Entries), result)
	}
	return nil
}

// WriteVisualization writes porcupine's HTML visualization of the last
// checked history to dir/name and returns the path.
func (c *LinearizabilityChecker) WriteVisualization(dir, name string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("visualization: %w", err)
	}
	path := filepath.Join(dir, name)
	if err := porcupine.VisualizePath(replicatedLogModel, c.info, path); err != nil {
		return "", fmt.Errorf("visualization: %w", err)
	}
	return path, nil
}
