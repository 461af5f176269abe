package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
)

// TestKill9KeepsAcknowledgedMetadata creates streams, topics and users
// from several connections against the real binary (a 16-slot metadata
// journal, so that the group checkpoints into snapshot.bin along the way),
// kills the server with SIGKILL in the middle, restarts it, and checks
// that every acknowledged stream (with its topic) and user is there with
// the id its reply gave; then once more from the restarted server, so the
// second recovery starts from a checkpoint and a journal the first
// recovery continued.
func TestKill9KeepsAcknowledgedMetadata(t *testing.T) {
	dir := t.TempDir()
	slots := "STRATA_METADATA_JOURNAL_SLOTS=16"
	want := map[string]uint32{} // acknowledged stream name -> id
	users := map[string]bool{}
	for round := 0; round < 2; round++ {
		p := startProcess(t, dir, slots)
		acked, ackedUsers := metadataWriters(t, p.addr, fmt.Sprintf("r%d", round), 3, 15, func() { p.kill9(t) })
		for name, id := range acked {
			want[name] = id
		}
		for name := range ackedUsers {
			users[name] = true
		}

		p = startProcess(t, dir, slots)
		c := dialRoot(t, p.addr)
		ctx := context.Background()
		streams, err := c.GetStreams(ctx)
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]uint32{}
		for _, s := range streams {
			have[s.Name] = s.ID
		}
		var missing []string
		for name, id := range want {
			got, ok := have[name]
			if !ok || got != id {
				missing = append(missing, fmt.Sprintf("%s (id %d, found %v %d)", name, id, ok, got))
				continue
			}
			topics, err := c.GetTopics(ctx, client.ID(id))
			if err != nil || len(topics) != 1 || topics[0].Name != "t" || topics[0].PartitionsCount != 2 {
				missing = append(missing, fmt.Sprintf("topic of %s: %+v %v", name, topics, err))
			}
		}
		list, err := c.GetUsers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		haveUsers := map[string]bool{}
		for _, u := range list {
			haveUsers[u.Username] = true
		}
		for name := range users {
			if !haveUsers[name] {
				missing = append(missing, "user "+name)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Fatalf("round %d: %d acknowledged streams and %d users, after kill -9 these are missing or changed:\n%s\n%s",
				round, len(want), len(users), strings.Join(missing, "\n"), p.stderr)
		}
		t.Logf("round %d: %d acknowledged streams (each with a topic) and %d users present after kill -9 (%d streams in all)",
			round, len(want), len(users), len(streams))
		p.terminate(t)
	}
}

// metadataWriters runs writers connections, each creating streams (each
// with a two-partition topic) and users named after prefix until perWriter
// rounds are done or the server dies. Once two thirds are acknowledged it
// takes the acknowledged streams (name -> id) and users, calls kill while
// the writers are still at work, waits for them and returns what it took.
func metadataWriters(t *testing.T, addr, prefix string, writers, perWriter int, kill func()) (map[string]uint32, map[string]bool) {
	t.Helper()
	var mu sync.Mutex
	streams := map[string]uint32{}
	users := map[string]bool{}
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	enough := make(chan struct{})
	var once sync.Once
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, err := client.Dial(ctx, addr)
			if err != nil {
				return
			}
			defer c.Close()
			if _, err := c.LoginUser(ctx, "iggy", "iggy"); err != nil {
				return
			}
			for i := 0; i < perWriter; i++ {
				name := fmt.Sprintf("%s-w%d-%d", prefix, w, i)
				s, err := c.CreateStream(ctx, name)
				if err != nil {
					return
				}
				if _, err := c.CreateTopic(ctx, client.ID(s.ID), "t", 2, nil); err != nil {
					return
				}
				mu.Lock()
				streams[name] = s.ID
				mu.Unlock()
				user := fmt.Sprintf("u-%s-%d-%d", prefix, w, i)
				if _, err := c.CreateUser(ctx, user, "secret1", client.UserActive, nil); err != nil {
					return
				}
				mu.Lock()
				users[user] = true
				if len(streams) >= writers*perWriter*2/3 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}(w)
	}
	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatal("the writers never got two thirds of their operations acknowledged")
	}
	s, u := copyAcked(&mu, streams, users)
	kill()
	wg.Wait()
	return s, u
}

// copyAcked snapshots the acknowledged sets (the writers go on until the
// kill, and what they get acknowledged meanwhile is not counted).
func copyAcked(mu *sync.Mutex, streams map[string]uint32, users map[string]bool) (map[string]uint32, map[string]bool) {
	mu.Lock()
	defer mu.Unlock()
	s := make(map[string]uint32, len(streams))
	for k, v := range streams {
		s[k] = v
	}
	u := make(map[string]bool, len(users))
	for k := range users {
		u[k] = true
	}
	return s, u
}
