package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// The flood of TestFloodMemoryComesBackToTheSystem, a smaller copy of the
// one server.TestUnauthenticatedFloodIsBounded runs in process: here the
// figure is the server process's resident set, read from /proc.
const (
	rssLargeClaims      = 16
	rssLargeClaimBytes  = 64 << 20
	rssLargeBodyBytes   = 8 << 20
	rssHeaderStalls     = 200
	rssIdle             = 500
	rssBoundStalls      = 4
	rssBoundFrameBytes  = 24 << 20
	rssBoundBodyBytes   = 20 << 20
	rssInFlightBytesMax = 64 << 20
	// rssMarginBytes allows for the connections themselves on top of the
	// request budget.
	rssMarginBytes = 64 << 20
	// rssReturnedBytes is how close to its figure before the flood the
	// resident set must come back.
	rssReturnedBytes = 16 << 20
)

// residentSetBytes reads VmRSS of a process from /proc.
func residentSetBytes(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// rawLogin opens a socket and logs in as root with a hand-built Register
// frame, returning the socket and the session's client id and number.
func rawLogin(t *testing.T, addr string, id byte) (net.Conn, wire.Uint128, uint64) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	clientID := wire.Uint128{Lo: uint64(id), Hi: 0x5A}
	h := wire.RequestHeader{Client: clientID, Operation: wire.OpRegister}
	frame, err := wire.AppendRequest(nil, &h, &wire.LoginRegisterRequest{
		Version:  wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "flood", SDKVersion: "1"},
		Username: "iggy", Password: "iggy"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	head := make([]byte, wire.HeaderSize)
	if _, err := io.ReadFull(conn, head); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, wire.PeekSize(head)-wire.HeaderSize)
	if _, err := io.ReadFull(conn, body); err != nil || wire.PeekCommand(head) != wire.CommandReply || len(body) < 16 {
		t.Fatalf("login reply: command %d, %d bytes, %v", wire.PeekCommand(head), len(body), err)
	}
	return conn, clientID, binary.LittleEndian.Uint64(body[8:])
}

// serverClosed waits until the server closes conn (a read ends other
// than by the deadline).
func serverClosed(conn net.Conn, deadline time.Time) bool {
	_ = conn.SetReadDeadline(deadline)
	buf := make([]byte, 256)
	for {
		if _, err := conn.Read(buf); err != nil {
			var ne net.Error
			return !(errors.As(err, &ne) && ne.Timeout())
		}
	}
}

// sendZeros writes n zero bytes, stopping at the first error.
func sendZeros(conn net.Conn, chunk []byte, n int) error {
	_ = conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	for n > 0 {
		part := chunk[:min(len(chunk), n)]
		if _, err := conn.Write(part); err != nil {
			return err
		}
		n -= len(part)
	}
	return nil
}

// TestFloodMemoryComesBackToTheSystem floods a real strata-server with
// unauthenticated sockets (64 MiB size claims with part of their body,
// header stalls, idle sockets) and logged-in sockets stalled inside 24 MiB
// frames, and reads the process's resident set: its growth stays within
// the request budget plus a margin, and once the sockets are gone it
// comes back down, without the test collecting anything in the server.
func TestFloodMemoryComesBackToTheSystem(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, dir,
		"STRATA_TCP_UNAUTHENTICATED_IDLE_TIMEOUT=2 s",
		"STRATA_TCP_REQUEST_READ_TIMEOUT=3 s",
		"STRATA_MESSAGE_BUS_IN_FLIGHT_BYTES_MAX="+strconv.Itoa(rssInFlightBytesMax),
		"STRATA_SYSTEM_MEMORY_POOL_IDLE_RELEASE_INTERVAL=200 ms",
		"STRATA_SYSTEM_LOGGING_LEVEL=warn")
	pid := p.cmd.Process.Pid
	healthy := dialRoot(t, p.addr)
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := healthy.CreateStream(c, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := healthy.CreateTopic(c, client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	send := func() error {
		_, err := healthy.SendMessages(c, client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("healthy")}})
		return err
	}
	if err := send(); err != nil {
		t.Fatal(err)
	}
	before := residentSetBytes(t, pid)

	chunk := make([]byte, 1<<20)
	var writers sync.WaitGroup
	var boundDone [rssBoundStalls]bool
	var boundMu sync.Mutex
	bound := make([]net.Conn, rssBoundStalls)
	for i := range bound {
		conn, clientID, session := rawLogin(t, p.addr, byte(i+1))
		h := wire.RequestHeader{Client: clientID, Operation: wire.OpNonReplicated, Code: wire.CodePing, Session: session, Request: 1,
			Size: rssBoundFrameBytes}
		var head [wire.HeaderSize]byte
		h.Encode(&head)
		binary.LittleEndian.PutUint32(head[48:], rssBoundFrameBytes)
		if _, err := conn.Write(head[:]); err != nil {
			t.Fatal(err)
		}
		bound[i] = conn
		writers.Add(1)
		go func(i int) {
			defer writers.Done()
			if sendZeros(conn, chunk, rssBoundBodyBytes) == nil {
				boundMu.Lock()
				boundDone[i] = true
				boundMu.Unlock()
			}
		}(i)
	}
	var largeWriters sync.WaitGroup
	open := func(n int) []net.Conn {
		conns := make([]net.Conn, n)
		for i := range conns {
			conn, err := net.DialTimeout("tcp", p.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			conns[i] = conn
		}
		return conns
	}
	claim := make([]byte, wire.HeaderSize)
	claim[60] = byte(wire.CommandRequest)
	claim[176] = byte(wire.OpRegister)
	binary.LittleEndian.PutUint32(claim[48:], rssLargeClaimBytes)
	large := open(rssLargeClaims)
	for _, conn := range large {
		if _, err := conn.Write(claim); err != nil {
			t.Fatal(err)
		}
		largeWriters.Add(1)
		go func() {
			defer largeWriters.Done()
			_ = sendZeros(conn, chunk, rssLargeBodyBytes)
		}()
	}
	stalled := open(rssHeaderStalls)
	for _, conn := range stalled {
		if _, err := conn.Write(claim[:100]); err != nil {
			t.Fatal(err)
		}
	}
	idle := open(rssIdle)

	deadline := time.Now().Add(30 * time.Second)
	largeWriters.Wait()
	for time.Now().Before(deadline) {
		boundMu.Lock()
		done := 0
		for _, d := range boundDone {
			if d {
				done++
			}
		}
		boundMu.Unlock()
		if done >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	peak := residentSetBytes(t, pid)
	t.Logf("server RSS %.1f MiB before the flood, %+.1f MiB at its height (request budget %d MiB + %d MiB margin)",
		float64(before)/(1<<20), float64(peak-before)/(1<<20), rssInFlightBytesMax>>20, rssMarginBytes>>20)
	if peak-before > rssInFlightBytesMax+rssMarginBytes {
		t.Fatalf("server RSS grew %.1f MiB under the flood, over the %d MiB budget plus %d MiB", float64(peak-before)/(1<<20), rssInFlightBytesMax>>20, rssMarginBytes>>20)
	}
	if err := send(); err != nil {
		t.Fatalf("healthy client during the flood: %v", err)
	}
	for group, conns := range map[string][]net.Conn{"large claim": large, "header stall": stalled, "idle": idle, "logged-in stall": bound} {
		for i, conn := range conns {
			if !serverClosed(conn, deadline) {
				t.Fatalf("%s socket %d still open", group, i)
			}
		}
	}
	writers.Wait()
	var after int64
	for {
		after = residentSetBytes(t, pid)
		if after <= before+rssReturnedBytes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server RSS still %+.1f MiB over its figure before the flood", float64(after-before)/(1<<20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("server RSS %+.1f MiB from before once the flood's sockets are closed", float64(after-before)/(1<<20))

	if err := send(); err != nil {
		t.Fatalf("healthy client after the flood: %v", err)
	}
	p.terminate(t)
}
