//go:build !invariants

package iofs

// useCheck is empty in release builds: a direct FS's single-goroutine rule
// is checked only with -tags invariants.
type useCheck struct{}

func (*useCheck) enter() {}
func (*useCheck) leave() {}
