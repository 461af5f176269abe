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
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := ts.connect()
				_ = c.Close()
			}()
		}
		wg.Wait()
	}
}
