package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/client/clienttest"
)

// testTimeout bounds every test context; tests never wait on it to pass.
const testTimeout = 20 * time.Second

func startServer(t *testing.T) *clienttest.Server {
	t.Helper()
	srv, err := clienttest.Start()
	if err != nil {
		t.Fatalf("start fake server: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close fake server: %v", err)
		}
	})
	return srv
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// dialRoot connects and logs in as the fake server's root user.
func dialRoot(t *testing.T, srv *clienttest.Server, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithCredentials(clienttest.RootUsername, clienttest.RootPassword),
		client.WithTransientBackoff(0)}, opts...)
	c, err := client.Dial(testContext(t), srv.Addr(), opts...)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close client: %v", err)
		}
	})
	return c
}

// lastRequest returns the last request the server saw.
func lastRequest(t *testing.T, srv *clienttest.Server) clienttest.Request {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("server saw no request")
	}
	return reqs[len(reqs)-1]
}
