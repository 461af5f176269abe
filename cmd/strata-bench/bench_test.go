package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
)

// inProcessTarget starts a server in this process on a temp dir and
// returns a Strata target for it.
func inProcessTarget(t *testing.T) *strataTarget {
	t.Helper()
	srv, err := startInProcess(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	target := newStrataTarget(srv.TCPAddr().String(), "iggy", "iggy")
	t.Cleanup(func() {
		if err := target.Close(); err != nil {
			t.Error(err)
		}
	})
	return target
}

func tiny(mode string) Workload {
	return Workload{Name: mode, Mode: mode, MessageSize: 200, MessagesPerBatch: 100, Batches: 5}
}

func TestTinyWorkloads(t *testing.T) {
	target := inProcessTarget(t)
	ctx := context.Background()

	t.Run("producer and consumer, 2x2", func(t *testing.T) {
		w := tiny(ModePinnedProducerAndConsumer)
		w.Producers, w.Consumers, w.Partitions = 2, 2, 2
		res, err := Run(ctx, target, w, false)
		if err != nil {
			t.Fatal(err)
		}
		const want = 2 * 5 * 100
		if res.Producers.Messages != want || res.Consumers.Messages != want || res.Verified != want {
			t.Fatalf("produced %d, consumed %d, verified %d; want %d each", res.Producers.Messages, res.Consumers.Messages, res.Verified, want)
		}
		if res.Producers.Bytes != want*200 || len(res.Producers.Actors) != 2 || res.Producers.Latency.Count != 10 {
			t.Fatalf("producer figures: %+v", res.Producers)
		}
		for _, a := range res.Consumers.Actors {
			if a.Messages != 500 {
				t.Fatalf("consumer %d read %d messages of its partition's 500", a.Index, a.Messages)
			}
		}
		if res.Producers.MBps <= 0 || res.Producers.Latency.P50 <= 0 || res.Producers.Latency.Max < res.Producers.Latency.P99 {
			t.Fatalf("implausible summary: %+v", res.Producers.Latency)
		}
	})

	t.Run("consumer only", func(t *testing.T) {
		w := tiny(ModePinnedConsumer)
		w.Streams, w.Partitions, w.Consumers = 2, 2, 4
		// A warm-up must not swallow the finite pre-filled volume.
		w.Warmup = time.Hour
		res, err := Run(ctx, target, w, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Producers != nil || res.Consumers.Messages != 4*500 || res.Verified != 4*500 {
			t.Fatalf("consumers read %d, verified %d; want 2000", res.Consumers.Messages, res.Verified)
		}
	})

	t.Run("end to end", func(t *testing.T) {
		w := tiny(ModeEndToEnd)
		w.RateMBps = 50
		res, err := Run(ctx, target, w, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.EndToEnd == nil || res.EndToEnd.Count != 500 || res.Verified != 500 {
			t.Fatalf("end-to-end: %+v, verified %d", res.EndToEnd, res.Verified)
		}
	})

	t.Run("persisted balanced", func(t *testing.T) {
		w := tiny(ModeBalancedProducer)
		w.Producers, w.Partitions, w.Durability = 3, 2, "persisted"
		res, err := Run(ctx, target, w, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Producers.Messages != 1500 || res.Consumers != nil {
			t.Fatalf("balanced producers sent %d, want 1500", res.Producers.Messages)
		}
	})

	t.Run("consumer group, 2 members on 4 partitions", func(t *testing.T) {
		w := tiny(ModeBalancedConsumerGroup)
		w.Consumers, w.Partitions, w.Batches = 2, 4, 10
		res, err := Run(ctx, target, w, false)
		if err != nil {
			t.Fatal(err)
		}
		const perPartition = 10 * 100
		const want = 4 * perPartition
		if res.Producers != nil || res.Consumers.Messages != want || res.Verified != want {
			t.Fatalf("group read %d, verified %d; want %d", res.Consumers.Messages, res.Verified, want)
		}
		// Members join in order before polling: A=[0,1], B=[3,2] (§7), so
		// each reads two partitions.
		for _, a := range res.Consumers.Actors {
			if a.Messages != 2*perPartition || a.Partition != partitionUnknown {
				t.Fatalf("member %d read %d messages, want %d", a.Index, a.Messages, 2*perPartition)
			}
		}
		g := res.Group
		if g == nil || g.Members != 2 || g.Commits < want/100 || g.CommitLatency.Count != int64(g.Commits) || g.Syncs < 2 {
			t.Fatalf("group figures: %+v", g)
		}
		if res.Consumers.MBps <= 0 || res.Consumers.Latency.Count < int64(g.Commits) {
			t.Fatalf("consumer figures: %+v", res.Consumers)
		}
		// The commits landed: the group's stored offset is each
		// partition's last offset.
		for p, id := range target.partitionIDs {
			off, err := target.admin.GetConsumerOffset(ctx, client.GroupConsumer(client.Named(groupName)),
				client.ID(target.streams[0]), client.ID(target.topics[0]), id)
			if err != nil {
				t.Fatal(err)
			}
			if off.StoredOffset != perPartition-1 {
				t.Fatalf("partition %d: group offset %d, want %d", p, off.StoredOffset, perPartition-1)
			}
		}
	})

	t.Run("consumer group needs one stream and a target with groups", func(t *testing.T) {
		w := tiny(ModeBalancedConsumerGroup)
		w.Streams = 2
		if _, err := Run(ctx, target, w, false); !errors.Is(err, ErrConfig) {
			t.Fatalf("two streams: %v", err)
		}
		if _, err := Run(ctx, corruptingTarget{target}, tiny(ModeBalancedConsumerGroup), false); !errors.Is(err, ErrNotAvailable) {
			t.Fatalf("target without groups: %v", err)
		}
	})
}

// corruptingTarget wraps a target and flips one payload byte of the
// third polled message of every consumer, as a broken broker would.
type corruptingTarget struct{ Target }

func (c corruptingTarget) Consumer(ctx context.Context, i int) (ConsumerConn, error) {
	cc, err := c.Target.Consumer(ctx, i)
	return corruptingConsumer{cc}, err
}

type corruptingConsumer struct{ ConsumerConn }

func (c corruptingConsumer) Poll(ctx context.Context, stream int, partition uint32, offset uint64, count int, dst []client.Message) ([]client.Message, error) {
	msgs, err := c.ConsumerConn.Poll(ctx, stream, partition, offset, count, dst)
	for i := range msgs {
		if msgs[i].Offset == 2 {
			msgs[i].Payload[len(msgs[i].Payload)-1] ^= 0x10
		}
	}
	return msgs, err
}

func TestRunFailsOnCorruptedPoll(t *testing.T) {
	target := inProcessTarget(t)
	_, err := Run(context.Background(), corruptingTarget{target}, tiny(ModePinnedProducerAndConsumer), false)
	if !errors.Is(err, ErrVerify) {
		t.Fatalf("a corrupted message went through: %v", err)
	}
}

func TestReportsAreWrittenAndSelfContained(t *testing.T) {
	target := inProcessTarget(t)
	res, err := Run(context.Background(), target, tiny(ModePinnedProducerAndConsumer), false)
	if err != nil {
		t.Fatal(err)
	}
	limits := &Limits{LoopbackMBps: 1000, WriteMBps: 900, WriteSyncMBps: 100, Dir: t.TempDir()}
	rep := newReport("test", limits, []*Result{res})
	dir := t.TempDir()
	var out bytes.Buffer
	if err := writeReports(&out, rep, filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 1 || back.Results[0].Verified != 500 || back.Limits.LoopbackMBps != 1000 {
		t.Fatalf("JSON round trip lost figures: %+v", back)
	}
	page, err := os.ReadFile(filepath.Join(dir, "r.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	// Throughput, messages/s, send and poll latency over time, distribution.
	if specs := pageCharts(t, page); len(specs) != 5 {
		t.Fatalf("report has %d charts, want 5", len(specs))
	}
	checkSelfContained(t, html)
	var table bytes.Buffer
	printResults(&table, []*Result{res}, limits)
	if !strings.Contains(table.String(), "% loopback") || !strings.Contains(table.String(), "500 messages read by the consumers and verified") {
		t.Fatalf("table:\n%s", table.String())
	}
}

func TestTinySuiteOnChildServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds strata-server")
	}
	sf := suiteFlags{batches: 3, warmup: 0, results: t.TempDir(), limitsDuration: 100 * time.Millisecond}
	var progress bytes.Buffer
	rep, err := runSuite(context.Background(), &sf, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	_, workloads, err := loadSuite(0, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(workloads) || rep.Limits == nil || rep.Limits.WriteSyncMBps <= 0 {
		t.Fatalf("suite ran %d of %d workloads, limits %+v", len(rep.Results), len(workloads), rep.Limits)
	}
	for _, r := range rep.Results {
		if r.Workload.needsConsumers() && r.Verified != r.Consumers.Messages {
			t.Fatalf("%s: verified %d of %d consumed", r.Workload.Name, r.Verified, r.Consumers.Messages)
		}
		if r.Workload.needsConsumers() && r.Consumers.Messages == 0 {
			t.Fatalf("%s consumed nothing", r.Workload.Name)
		}
		if r.Workload.Mode == ModeBalancedConsumerGroup && (r.Group == nil || r.Group.Commits == 0 || r.Consumers.Messages != 3*1000*uint64(r.Workload.Partitions)) {
			t.Fatalf("%s: group %+v, consumed %d", r.Workload.Name, r.Group, r.Consumers.Messages)
		}
		if r.ServerRSSPeakBytes == 0 {
			t.Fatalf("%s: no server RSS", r.Workload.Name)
		}
	}
	if len(rep.Targets) == 0 || !rep.Targets[len(rep.Targets)-1].Found {
		t.Fatalf("targets not evaluated: %+v", rep.Targets)
	}
	if e2e := rep.Results[len(rep.Results)-1]; e2e.EndToEnd == nil || e2e.Workload.RateMBps <= 0 {
		t.Fatalf("end-to-end ran without its rate: %+v", e2e.Workload)
	}
	var out bytes.Buffer
	if err := writeSuiteReports(&out, &sf, rep); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(sf.results, "*-*.json"))
	if err != nil || len(files) != 1 {
		t.Fatalf("results: %v %v", files, err)
	}
	if _, err := os.Stat(strings.TrimSuffix(files[0], ".json") + ".html"); err != nil {
		t.Fatal(err)
	}
}
