package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// TestPersistedAcknowledgementsSurvivePowerLoss runs the broker on the
// in-memory file system, which loses every unsynced write on Crash: 6
// producers send to a persisted topic concurrently (their sends share
// group-commit syncs), the power is cut at once after the last
// acknowledgement, and a new broker on what survived must hold every
// acknowledged message. A replicated topic written alongside may lose
// its unsynced tail, which is what its durability promises.
func TestPersistedAcknowledgementsSurvivePowerLoss(t *testing.T) {
	fsys := &lockedFS{fs: memfs.New()}
	const dir = "/data"
	srv, addr := startOnFS(t, fsys, dir)
	admin := connectTo(t, addr)
	if _, err := admin.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	persisted := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	if _, err := admin.CreateTopic(ctx(t), client.ID(0), "persisted", 2, persisted); err != nil {
		t.Fatal(err)
	}
	const producers, batches, perBatch = 6, 15, 10
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for w := 0; w < producers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, err := dialLogin(t, addr)
			if err != nil {
				errs <- err
				return
			}
			for b := 0; b < batches; b++ {
				msgs := make([]client.Message, perBatch)
				for i := range msgs {
					msgs[i].Payload = []byte(fmt.Sprintf("w%d-b%d-m%d", w, b, i))
				}
				if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(uint32(w%2)), msgs); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fsys.crash() // power loss right after the last acknowledgement
	_ = srv.Shutdown(context.Background())

	srv, addr = startOnFS(t, fsys, dir)
	defer srv.Shutdown(context.Background())
	c := connectTo(t, addr)
	total := 0
	for p := uint32(0); p < 2; p++ {
		res, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
			Stream: client.ID(0), Topic: client.ID(0), Partition: p, Strategy: client.PollFirst(), Count: 100000})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range res.Messages {
			if m.Offset != uint64(i) {
				t.Fatalf("partition %d: offset %d at position %d", p, m.Offset, i)
			}
		}
		total += len(res.Messages)
	}
	if want := producers * batches * perBatch; total != want {
		t.Fatalf("%d of %d acknowledged persisted messages survived the power loss", total, want)
	}
}

// startOnFS starts a broker whose data lives on fsys.
func startOnFS(t *testing.T, fsys storage.FS, dir string) (*server.Server, string) {
	t.Helper()
	cfg, err := config.Load("", append([]string{"STRATA_SYSTEM_PATH=" + dir, "STRATA_TCP_ADDRESS=127.0.0.1:0"}, engineEnv()...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, FS: fsys, Logger: zap.NewNop(), Root: server.RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return srv, srv.TCPAddr().String()
}

// lockedFS makes memfs (not safe for concurrent use) usable by a broker's
// shards and goroutines: every call holds one lock.
type lockedFS struct {
	mu sync.Mutex
	fs *memfs.FS
}

func (l *lockedFS) crash() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fs.Crash()
}

func (l *lockedFS) file(f storage.File, err error) (storage.File, error) {
	if err != nil {
		return nil, err
	}
	return &lockedFile{mu: &l.mu, f: f}, nil
}

func (l *lockedFS) Create(p string) (storage.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.file(l.fs.Create(p))
}

func (l *lockedFS) OpenReadWrite(p string) (storage.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.file(l.fs.OpenReadWrite(p))
}

func (l *lockedFS) Open(p string) (storage.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.file(l.fs.Open(p))
}

func (l *lockedFS) MkdirAll(p string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fs.MkdirAll(p)
}
func (l *lockedFS) Remove(p string) error { l.mu.Lock(); defer l.mu.Unlock(); return l.fs.Remove(p) }
func (l *lockedFS) RemoveAll(p string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fs.RemoveAll(p)
}
func (l *lockedFS) Rename(a, b string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fs.Rename(a, b)
}
func (l *lockedFS) ReadDir(p string) ([]storage.DirEntry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fs.ReadDir(p)
}
func (l *lockedFS) Stat(p string) (storage.FileInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fs.Stat(p)
}
func (l *lockedFS) SyncDir(p string) error { l.mu.Lock(); defer l.mu.Unlock(); return l.fs.SyncDir(p) }

type lockedFile struct {
	mu *sync.Mutex
	f  storage.File
}

func (f *lockedFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.ReadAt(p, off)
}
func (f *lockedFile) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.WriteAt(p, off)
}
func (f *lockedFile) Append(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.Append(p)
}
func (f *lockedFile) AppendVector(b [][]byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.AppendVector(b)
}
func (f *lockedFile) Truncate(n int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.Truncate(n)
}
func (f *lockedFile) Sync() error          { f.mu.Lock(); defer f.mu.Unlock(); return f.f.Sync() }
func (f *lockedFile) Size() (int64, error) { f.mu.Lock(); defer f.mu.Unlock(); return f.f.Size() }
func (f *lockedFile) Close() error         { f.mu.Lock(); defer f.mu.Unlock(); return f.f.Close() }
