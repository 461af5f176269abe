package sim

import (
	"fmt"
	"math"

	"github.com/anishathalye/porcupine"
	"github.com/stratabroker/strata/server/metadata"
)

// The metadata plane's checker: a porcupine model of the topic names
// (names to the lowest free id from 0) that judges the metadata history.

// metaState is the model's state: the stream exists, and the id of each
// topic name (-1: none).
type metaState struct {
	stream bool
	ids    [metaTopicNames]int16
}

type metaInput struct {
	op    metaOp
	topic int
}

type metaOutput struct {
	known bool
	code  uint32
	id    uint32
	found bool
}

var metaModel = porcupine.Model{
	Init: func() interface{} {
		s := metaState{}
		for k := range s.ids {
			s.ids[k] = -1
		}
		return s
	},
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s := state.(metaState)
		in, out := input.(metaInput), output.(metaOutput)
		code, id := uint32(0), uint32(0)
		next := s
		switch in.op {
		case metaCreateStream:
			if s.stream {
				code = uint32(metadata.CodeStreamNameAlreadyExists)
			} else {
				next.stream = true
			}
		case metaCreateTopic:
			switch {
			case !s.stream:
				code = uint32(metadata.CodeStreamIDNotFound)
			case s.ids[in.topic] >= 0:
				code = uint32(metadata.CodeTopicNameAlreadyExists)
			default:
				id = lowestFreeTopicID(&s)
				next.ids[in.topic] = int16(id)
			}
		case metaDeleteTopic:
			switch {
			case !s.stream:
				code = uint32(metadata.CodeStreamIDNotFound)
			case s.ids[in.topic] < 0:
				code = uint32(metadata.CodeTopicIDNotFound)
			default:
				next.ids[in.topic] = -1
			}
		case metaGetTopic:
			if !s.stream {
				return !out.known || out.code == uint32(metadata.CodeStreamIDNotFound), s
			}
			found := s.ids[in.topic] >= 0
			return !out.known || (out.code == 0 && out.found == found && (!found || out.id == uint32(s.ids[in.topic]))), s
		}
		if !out.known {
			return true, next
		}
		if out.code != code || (code == 0 && in.op == metaCreateTopic && out.id != id) {
			return false, s
		}
		return true, next
	},
	Equal: func(a, b interface{}) bool { return a.(metaState) == b.(metaState) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(metaInput), output.(metaOutput)
		name := ""
		if in.topic >= 0 {
			name = metaTopicName(in.topic)
		}
		if !out.known {
			return fmt.Sprintf("%s(%s) -> ?", metaOpNames[in.op], name)
		}
		return fmt.Sprintf("%s(%s) -> code %d id %d found %v", metaOpNames[in.op], name, out.code, out.id, out.found)
	},
}

func lowestFreeTopicID(s *metaState) uint32 {
	for id := uint32(0); ; id++ {
		used := false
		for _, v := range s.ids {
			used = used || v == int16(id)
		}
		if !used {
			return id
		}
	}
}

// check runs the end-of-run checks of the metadata plane.
func (m *brokerMeta) check() (string, error) {
	var ops []porcupine.Operation
	for _, e := range m.history {
		if e.op == metaRegister || (e.op == metaGetTopic && !(e.done && e.known)) {
			continue
		}
		op := porcupine.Operation{ClientId: e.client, Input: metaInput{op: e.op, topic: e.topic}, Call: int64(e.call), Return: math.MaxInt64, Output: metaOutput{}}
		if e.done {
			op.Return = int64(e.ret)
			op.Output = metaOutput{known: e.known, code: e.code, id: e.id, found: e.found}
		} else if _, applied := m.appliedAt[[2]uint64{clientIDBase + uint64(e.client), e.request}]; !applied {
			continue // never applied anywhere: it took no effect
		}
		ops = append(ops, op)
	}
	if result, _ := porcupine.CheckOperationsVerbose(metaModel, ops, 0); result != porcupine.Ok {
		for _, op := range ops {
			m.w.logf("metadata history: client %d [%d, %d] %s", op.ClientId, op.Call, op.Return, metaModel.DescribeOperation(op.Input, op.Output))
		}
		return "metadata-linearizability", fmt.Errorf("metadata history of %d operations is not linearizable against the topic model (names to the lowest free id) (%s)", len(ops), result)
	}
	return "", nil
}

// The operator's bootstrap: before the safety phase, with every fault off,
// an operator (a client of its own, submitting at the metadata primary of
// its node, as production's first boot submits its root user) registers
// and creates the stream "broker" and the topics of every partition group
// but the last, one op at a time; then the faults and the clients start.
