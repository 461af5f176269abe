package sim

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/vsr"
)

// TestBrokerMetadataPlane runs broker seeds with the metadata group on
// every node: the clients register, create the stream and the partition
// topics through the group (the partition groups' first requests are
// refused until their topic exists), create and delete scratch topics,
// and every seed passes its checkers.
func TestBrokerMetadataPlane(t *testing.T) {
	var commits, gated, retried, deleted uint64
	for seed := uint64(1); seed <= 12; seed++ {
		p := DrawParams(seed)
		p.UseBroker()
		if p.Metadata != 1 {
			t.Fatalf("seed %d: a drawn broker seed runs without the metadata group", seed)
		}
		res := Run(Options{Params: p})
		if res.Outcome.Kind != OutcomeOK {
			t.Fatalf("seed %d: %s (%s): %s", seed, res.Outcome.Kind, res.Outcome.Checker, res.Outcome.Detail)
		}
		b := res.broker
		commits += b.meta.commits
		gated += b.meta.gated
		retried += b.meta.retried
		deleted += b.meta.deleted
	}
	t.Logf("12 broker seeds: %d metadata ops committed, %d partition requests refused before their topic, %d metadata retries, %d topics deleted", commits, gated, retried, deleted)
	if commits == 0 || gated == 0 || deleted == 0 {
		t.Fatalf("the metadata plane did not run: commits %d gated %d deleted %d", commits, gated, deleted)
	}
}

// TestBrokerMetadataScenarioWithoutLine: a scenario file written before the
// metadata plane (no `set metadata` line) replays without it.
func TestBrokerMetadataScenarioWithoutLine(t *testing.T) {
	sc, err := ParseScenario("swarm 5\nworkload broker\nrun\n")
	if err != nil {
		t.Fatal(err)
	}
	if p := sc.ScenarioParams(); p.Metadata != 0 {
		t.Fatalf("an old scenario runs with metadata=%d", p.Metadata)
	}
	sc, err = ParseScenario("swarm 5\nworkload broker\nset metadata 1\nrun\n")
	if err != nil {
		t.Fatal(err)
	}
	if p := sc.ScenarioParams(); p.Metadata != 1 {
		t.Fatalf("set metadata 1 gave metadata=%d", p.Metadata)
	}
}

// TestMetaModel checks the metadata model against histories that must and
// must not linearize: ids are the lowest free from 0, a deleted name's id
// is reused, and an id or code the state does not give is rejected.
func TestMetaModel(t *testing.T) {
	op := func(client int, call, ret int64, o metaOp, topic int, code uint32, id uint32, found bool) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: metaInput{op: o, topic: topic},
			Output: metaOutput{known: true, code: code, id: id, found: found}}
	}
	x0, x1 := brokerGroupsMax, brokerGroupsMax+1
	ok := []porcupine.Operation{
		op(0, 1, 2, metaCreateStream, -1, 0, 0, false),
		op(0, 3, 4, metaCreateTopic, x0, 0, 0, false),
		op(1, 5, 6, metaCreateTopic, x1, 0, 1, false),
		op(0, 7, 8, metaDeleteTopic, x0, 0, 0, false),
		op(1, 9, 10, metaGetTopic, x0, 0, 0, false),
		op(0, 11, 12, metaCreateTopic, x0, 0, 0, false), // id 0 is free again
		op(1, 13, 14, metaGetTopic, x1, 0, 1, true),
	}
	if r := porcupine.CheckOperations(metaModel, ok); !r {
		t.Fatal("a valid metadata history does not linearize")
	}
	for name, bad := range map[string][]porcupine.Operation{
		"wrong id": {op(0, 1, 2, metaCreateStream, -1, 0, 0, false), op(0, 3, 4, metaCreateTopic, x0, 0, 1, false)},
		"created twice": {op(0, 1, 2, metaCreateStream, -1, 0, 0, false), op(0, 3, 4, metaCreateTopic, x0, 0, 0, false),
			op(1, 5, 6, metaCreateTopic, x0, 0, 1, false)},
		"read a deleted topic": {op(0, 1, 2, metaCreateStream, -1, 0, 0, false), op(0, 3, 4, metaCreateTopic, x0, 0, 0, false),
			op(0, 5, 6, metaDeleteTopic, x0, 0, 0, false), op(1, 7, 8, metaGetTopic, x0, 0, 0, true)},
		"topic before its stream": {op(0, 1, 2, metaCreateTopic, x0, 0, 0, false)},
		"a retried create answered already-exists": {op(0, 1, 2, metaCreateStream, -1, 0, 0, false),
			op(0, 3, 4, metaCreateTopic, x0, uint32(metadata.CodeTopicNameAlreadyExists), 0, false)},
	} {
		if porcupine.CheckOperations(metaModel, bad) {
			t.Errorf("%s: an invalid metadata history linearizes", name)
		}
	}
}

// TestBrokerMetadataExactlyOnce: a request applied at a second op, or a
// committed reply naming another op than the one that applied it, fails
// the exactly-once check.
func TestBrokerMetadataExactlyOnce(t *testing.T) {
	p := DrawParams(3)
	p.UseBroker()
	p.normalize()
	w, err := newBrokerWorld(&p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := encodeMetaBody(0, 1, metaCreateStream, -1)
	eff := metaEffects{m: w.meta, node: 0}
	mach := metadata.New()
	eff.Applied(mach, 7, 1, metadata.OperationCreateStream, body, nil)
	eff.Applied(mach, 7, 1, metadata.OperationCreateStream, body, nil) // a replay of the same op
	if w.violation != nil {
		t.Fatalf("the replay of one op failed the check: %v", w.violation)
	}
	eff.Applied(mach, 9, 1, metadata.OperationCreateStream, body, nil)
	if w.violation == nil || w.violationKind != "exactly-once" {
		t.Fatalf("a request applied at ops 7 and 9 passed (violation %v)", w.violation)
	}

	w, err = newBrokerWorld(&p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := w.clients[0]
	mc := w.meta.clients[0]
	mc.registered, mc.session, mc.request = true, 1, 1
	w.meta.appliedAt[[2]uint64{clientIDBase, 1}] = 7
	w.meta.history = append(w.meta.history, metaEntry{client: 0, op: metaCreateStream, request: 1, call: 1})
	mc.call = &metaCall{entry: 0, req: metaRequest{op: metaCreateStream, session: 1, request: 1}, invoke: 5}
	w.meta.clientReceive(c, &brokerReply{client: 0, request: 1, group: brokerMetaGroup, meta: true, metaOp: 9})
	if w.violation == nil || w.violationKind != "exactly-once" {
		t.Fatalf("a reply naming op 9 for a request applied at op 7 passed (violation %v)", w.violation)
	}
}

// TestBrokerTopicGate: a partition op applied before the metadata group
// committed its topic fails the check; the planted bug that skips the
// node's topic lookup is found on the first seeds.
func TestBrokerTopicGate(t *testing.T) {
	found := 0
	for seed := uint64(1); seed <= 5; seed++ {
		p := DrawParams(seed)
		p.UseBroker()
		res := Run(Options{Params: p, Bugs: vsr.BugPartitionOpBeforeTopic})
		if res.Outcome.Kind != OutcomeOK && res.Outcome.Checker == "topic-gate" {
			found++
		}
	}
	if found == 0 {
		t.Fatal("the planted partition-op-before-topic bug was not found by the topic gate in 5 seeds")
	}
}

// TestBrokerMetadataOperatorStaleReply: the operator's bootstrap takes only
// the answer to its request in flight. A node delivers replies to earlier
// requests too (a new primary commits its predecessor's ops again and
// answers them; broker seeds 20307 and 23398: the register's reply arrived
// again while the create-stream was in flight, each later step took the
// previous step's reply, and the topic model saw p1 get p0's id while p0
// was never created); taken for the current request's, it made a step
// that never committed look done, with another op's id.
func TestBrokerMetadataOperatorStaleReply(t *testing.T) {
	p := DrawParams(3)
	p.UseBroker()
	p.normalize()
	w, err := newBrokerWorld(&p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := w.meta
	m.booting, m.operatorRequest = true, 2
	replies := metaReplies{m: m, node: 0}
	replies.Deliver(group.Reply{Client: m.operatorID(), Request: 1, Operation: metadata.OperationCreateStream, Op: 2})
	replies.Deliver(group.Reply{Client: m.operatorID(), Request: 0, Operation: group.OperationRegister, Op: 1})
	if m.operatorReply != nil {
		t.Fatalf("the operator's create-topic (request 2) took the reply to request %d (op %d)", m.operatorReply.Request, m.operatorReply.Op)
	}
	replies.Deliver(group.Reply{Client: m.operatorID(), Request: 2, Operation: metadata.OperationCreateTopic, Op: 3})
	if r := m.operatorReply; r == nil || r.Request != 2 || r.Op != 3 {
		t.Fatalf("the operator's create-topic (request 2) did not take its own reply: %+v", r)
	}
}

// TestBrokerMetaNeedInLivenessOnlyForCheckedGroups: in the liveness phase a
// partition request refused for its missing topic starts a create-topic
// only if the phase waits for that request (its group's liveness is
// checked). A request to a waived group never finishes; a create-topic its
// refusal started after the phase found every client done was left
// waiting at the end-of-run check (seed 11332).
func TestBrokerMetaNeedInLivenessOnlyForCheckedGroups(t *testing.T) {
	for _, tc := range []struct {
		group  int
		waived bool
		want   bool
	}{
		{group: 1, waived: false, want: true},
		{group: 2, waived: true, want: false},
	} {
		p := DrawParams(11332)
		p.UseBroker()
		p.Groups = 3
		w, err := newBrokerWorld(&p, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if w.meta == nil {
			t.Fatal("seed 11332 runs without the metadata group")
		}
		if tc.waived {
			w.lostMemory[tc.group] = "lost"
		}
		w.core = []int{0, 1, 2}
		c := w.clients[1]
		c.stopped = true
		c.call = &brokerCall{op: brokerSend, group: tc.group, retryAt: w.now + 5}
		mc := w.meta.clients[1]
		mc.registered, mc.session = true, 6
		w.meta.topicMissing(c, tc.group)
		w.meta.clientTick(c)
		if got := mc.call != nil; got != tc.want {
			t.Fatalf("group %d (waived %v): a create-topic started: %v, want %v", tc.group, tc.waived, got, tc.want)
		}
		if tc.want && (mc.call.req.op != metaCreateTopic || mc.call.req.topic != tc.group) {
			t.Fatalf("group %d: started %s of topic %d, want a create-topic of its topic", tc.group, metaOpNames[mc.call.req.op], mc.call.req.topic)
		}
	}
}
