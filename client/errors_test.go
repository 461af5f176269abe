package client_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/client/clienttest"
	"github.com/stratabroker/strata/net/wire"
)

func TestErrorMapping(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	if _, err := c.CreateStream(ctx, "dup"); err != nil {
		t.Fatal(err)
	}
	// Committed rejection in a result section.
	_, err := c.CreateStream(ctx, "dup")
	if !errors.Is(err, wire.ErrStreamNameAlreadyExists) {
		t.Fatalf("duplicate stream: %v", err)
	}
	if got := client.CodeOf(err); got != wire.ErrStreamNameAlreadyExists {
		t.Fatalf("CodeOf = %v", got)
	}
	if err.Error() != "stream name already exists (1012 StreamNameAlreadyExists)" {
		t.Fatalf("message %q", err)
	}
	// Committed rejection of a missing stream.
	if err := c.DeleteStream(ctx, client.Named("nope")); !errors.Is(err, wire.ErrStreamIdNotFound) ||
		err.Error() != "stream not found (1009 StreamIdNotFound)" {
		t.Fatalf("delete missing stream: %v", err)
	}
	// Pre-commit denial through the status field.
	_, err = c.PollMessages(ctx, client.PollRequest{Stream: client.ID(7), Topic: client.ID(0),
		Strategy: client.PollFirst(), Count: 1})
	if !errors.Is(err, wire.ErrStreamIdNotFound) {
		t.Fatalf("poll missing stream: %v", err)
	}
	// Empty body for a single-object read.
	if _, err := c.GetStream(ctx, client.ID(99)); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("get missing stream: %v", err)
	}
	// Result codes on DeleteSegments arrive under operation 68.
	srv.Inject(func(r clienttest.Request) *clienttest.Injection {
		if r.Operation == wire.OpDeleteSegments {
			return &clienttest.Injection{Result: wire.ErrPartitionNotFound}
		}
		return nil
	})
	if err := c.DeleteSegments(ctx, client.ID(0), client.ID(0), 0, 1); !errors.Is(err, wire.ErrPartitionNotFound) {
		t.Fatalf("delete segments rejection: %v", err)
	}
	srv.Inject(nil)
	// A client-side argument error never reaches the server.
	before := len(srv.Requests())
	if _, err := c.CreateStream(ctx, ""); !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("empty name: %v", err)
	}
	if len(srv.Requests()) != before {
		t.Fatal("an invalid request reached the server")
	}
	// The counter was not consumed by the rejected argument.
	if _, err := c.CreateStream(ctx, "next"); err != nil {
		t.Fatal(err)
	}
	if r := lastRequest(t, srv); r.Request != 5 {
		t.Fatalf("request after invalid argument = %d, want 5", r.Request)
	}
}

// TestTransientReplay: 57 replays the same request number; 58 retries.
func TestTransientReplay(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	var mu sync.Mutex
	remaining := map[wire.Operation]int{wire.OpCreateStream: 2, wire.OpSendMessages: 1}
	codes := map[wire.Operation]*clienttest.Injection{
		wire.OpCreateStream: {Result: wire.ErrTransientNotCommitted},
		wire.OpSendMessages: {Status: wire.ErrTransientNotAccepted},
	}
	srv.Inject(func(r clienttest.Request) *clienttest.Injection {
		mu.Lock()
		defer mu.Unlock()
		if remaining[r.Operation] > 0 {
			remaining[r.Operation]--
			return codes[r.Operation]
		}
		return nil
	})
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	var numbers []uint64
	for _, r := range srv.Requests() {
		if r.Operation == wire.OpCreateStream {
			numbers = append(numbers, r.Request)
		}
	}
	if len(numbers) != 3 || numbers[0] != 1 || numbers[1] != 1 || numbers[2] != 1 {
		t.Fatalf("create stream request numbers %v, want [1 1 1]", numbers)
	}
	if _, err := c.CreateTopic(ctx, client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	if r := lastRequest(t, srv); r.Request != 2 {
		t.Fatalf("next metadata op numbered %d, want 2", r.Request)
	}
	if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.Balanced(),
		[]client.Message{{Payload: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	// Every attempt answering 57 exhausts the retries.
	srv.Inject(func(r clienttest.Request) *clienttest.Injection {
		if r.Operation == wire.OpDeleteStream {
			return &clienttest.Injection{Result: wire.ErrTransientNotCommitted}
		}
		return nil
	})
	err := c.DeleteStream(ctx, client.ID(0))
	if !errors.Is(err, client.ErrTransientRetriesExhausted) || !errors.Is(err, wire.ErrTransientNotCommitted) {
		t.Fatalf("endless 57: %v", err)
	}
}

// TestEvictionDropsSessionAndRelogs: an eviction fails the request, closes
// the connection; the next call redials and logs in again.
func TestEvictionDropsSessionAndRelogs(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	var once sync.Once
	srv.Inject(func(r clienttest.Request) *clienttest.Injection {
		var inj *clienttest.Injection
		if r.Operation == wire.OpCreateStream {
			once.Do(func() { inj = &clienttest.Injection{Evict: wire.EvictStaleClient} })
		}
		return inj
	})
	_, err := c.CreateStream(ctx, "s")
	if !errors.Is(err, wire.ErrStaleClient) {
		t.Fatalf("evicted request: %v", err)
	}
	if c.LoggedIn() {
		t.Fatal("session kept after eviction")
	}
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatalf("after eviction: %v", err)
	}
	reqs := srv.Requests()
	var registers int
	for _, r := range reqs {
		if r.Operation == wire.OpRegister {
			registers++
		}
	}
	if registers != 2 {
		t.Fatalf("%d registers, want 2 (login, re-login after eviction)", registers)
	}
	if last := reqs[len(reqs)-1]; last.Request != 1 {
		t.Fatalf("first metadata op of the new session numbered %d, want 1", last.Request)
	}
}

func TestUnauthenticatedRead(t *testing.T) {
	srv := startServer(t)
	ctx := testContext(t)
	c, err := client.Dial(ctx, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.GetStreams(ctx); !errors.Is(err, wire.ErrUnauthenticated) {
		t.Fatalf("read before login: %v", err)
	}
	before := len(srv.Requests())
	if _, err := c.CreateStream(ctx, "x"); !errors.Is(err, wire.ErrUnauthenticated) || !errors.Is(err, client.ErrNotLoggedIn) {
		t.Fatalf("write before login: %v", err)
	}
	if err := c.Logout(ctx); err != nil {
		t.Fatalf("logout before login: %v", err)
	}
	if len(srv.Requests()) != before {
		t.Fatal("a session-less replicated request reached the server")
	}
}

func TestProtocolViolations(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	srv.Inject(func(r clienttest.Request) *clienttest.Injection {
		if r.Code == wire.CodeGetStreams {
			return &clienttest.Injection{WrongEcho: true}
		}
		return nil
	})
	ctx := testContext(t)
	if _, err := c.GetStreams(ctx); !errors.Is(err, client.ErrProtocol) {
		t.Fatalf("wrong echo: %v", err)
	}
	srv.Inject(nil)
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("after reconnect: %v", err)
	}
}

// TestCancelledRequest: a request the server never answers ends with the
// context; the connection is abandoned and the next call reconnects.
func TestCancelledRequest(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	srv.Inject(func(r clienttest.Request) *clienttest.Injection {
		if r.Code == wire.CodeGetStats {
			return &clienttest.Injection{Drop: true}
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
	defer cancel()
	_, err := c.GetStats(ctx)
	if !errors.Is(err, client.ErrConnectionLost) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("unanswered request: %v", err)
	}
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatalf("after cancel: %v", err)
	}
}

func TestConcurrentCallers(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	const callers, calls = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, callers*calls)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range calls {
				var err error
				if (i+j)%2 == 0 {
					err = c.Ping(ctx)
				} else {
					_, err = c.GetStreams(ctx)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestClosedClient(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(testContext(t)); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("ping on closed client: %v", err)
	}
}

func TestHeartbeat(t *testing.T) {
	srv := startServer(t)
	pinged := make(chan struct{}, 1)
	srv.Inject(func(r clienttest.Request) *clienttest.Injection {
		if r.Code == wire.CodePing {
			select {
			case pinged <- struct{}{}:
			default:
			}
		}
		return nil
	})
	c := dialRoot(t, srv, client.WithHeartbeat(time.Millisecond, func(err error) { t.Errorf("heartbeat: %v", err) }))
	select {
	case <-pinged:
	case <-testContext(t).Done():
		t.Fatal("no heartbeat ping")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseInterruptsBlockedRequest: Close does not wait for a request the
// server never answers; the request fails with ErrClosed.
func TestCloseInterruptsBlockedRequest(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	arrived := make(chan struct{})
	srv.Inject(func(r clienttest.Request) *clienttest.Injection {
		if r.Code == wire.CodeGetStats {
			close(arrived)
			return &clienttest.Injection{Drop: true}
		}
		return nil
	})
	failed := make(chan error, 1)
	go func() {
		_, err := c.GetStats(context.Background())
		failed <- err
	}()
	<-arrived
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-failed; !errors.Is(err, client.ErrClosed) || !errors.Is(err, client.ErrConnectionLost) {
		t.Fatalf("blocked request after Close: %v", err)
	}
	if err := c.Ping(testContext(t)); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("ping after Close: %v", err)
	}
}
