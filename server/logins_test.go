package server_test

import (
	"sync"
	"testing"
)

// TestConcurrentLoginsFromOneAddress logs in from many connections of one
// address at once: the failed-login limiter must not refuse good logins
// because others are in flight.
func TestConcurrentLoginsFromOneAddress(t *testing.T) {
	ts := startServer(t, t.TempDir())
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, 12)
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := dialLogin(t, ts.addr)
				if err != nil {
					errs <- err
					return
				}
				_ = c.Close()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}
