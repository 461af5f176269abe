# Strata build and test entry points. See README.md.
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := bin
FUZZTIME ?= 30s
SEEDS ?= 10000
PARALLEL ?= 2

.PHONY: swarm-narrow all build run test test-short fuzz swarm soak kill-loop lint clean certs

# What `strata --version` (and every binary's) reports: the commit and the
# build date, stamped with -X (VCS stamping may be off, e.g. GOFLAGS=
# -buildvcs=false, and records no build date).
BUILDINFO := github.com/stratabroker/strata/cmd/internal/buildinfo
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
MODIFIED ?= $(shell git diff --quiet HEAD -- 2>/dev/null || echo true)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X $(BUILDINFO).commit=$(COMMIT) -X $(BUILDINFO).date=$(BUILD_DATE) -X $(BUILDINFO).modified=$(MODIFIED)

all: build

# strata-sim is built with the expensive invariant checks (vsr's
# assertInvariants after every input) compiled in: every swarm runs them.
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...
	$(GO) build -ldflags "$(LDFLAGS)" -tags invariants -o $(BIN)/strata-sim ./cmd/strata-sim

# Starts the server on the embedded default config (data under ./local_data,
# TCP on 127.0.0.1:8090) with the development root credentials iggy/iggy,
# plus the HTTP API on 127.0.0.1:3000 and WebSocket on 127.0.0.1:8092.
run: build
	STRATA_HTTP_ENABLED=true STRATA_WEBSOCKET_ENABLED=true ./$(BIN)/strata-server --with-default-root-credentials

# The whole suite, with the expensive invariant checks compiled in: once
# with the default IO engine (io_uring where the kernel allows it), then the
# broker's suites again on the pread/pwrite engine.
BROKER_PKGS := ./server/... ./cmd/strata-server/ ./cmd/strata/...
test:
	$(GO) vet ./...
	$(GO) test -tags invariants -count=1 -timeout 9m ./...
	STRATA_SYSTEM_IO_ENGINE=sync $(GO) test -tags invariants -count=1 -timeout 5m $(BROKER_PKGS)

test-short:
	$(GO) test -short -count=1 ./...

# Runs every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# A development CA and a server certificate under ./certs, for
# [tcp.tls] / [websocket.tls] / [http.tls] / [quic.certificate]:
#   STRATA_TCP_TLS_ENABLED=true STRATA_TCP_TLS_CERT_FILE=certs/server.pem STRATA_TCP_TLS_KEY_FILE=certs/server-key.pem
certs: build
	./$(BIN)/strata-server --make-certs certs

# A long simulator swarm: make swarm SEEDS=10000. It prints the coverage
# table (seeds that hit each protocol event and fault) and the throughput.
swarm: build
	./$(BIN)/strata-sim swarm --seeds $(SEEDS) --parallel $(PARALLEL)

soak: build
	./$(BIN)/strata-sim swarm --seeds 100000 --parallel $(PARALLEL)

# Issue 13's kill -9 loop against the real binary: a persisted topic
# (messages and consumer offsets), concurrent producers and consumers,
# SIGKILL at a random moment each round, every acknowledged message and
# offset checked after each restart. make test runs 5 rounds.
KILL_ROUNDS ?= 100
kill-loop:
	STRATA_TEST_KILL_ROUNDS=$(KILL_ROUNDS) $(GO) test -count=1 -timeout 60m -v \
	  -run '^TestKill9LoopPersistedLosesNothingAcknowledged$$' ./cmd/strata-server/

# Issue 12's narrowed setting: persisted, 3 replicas, frequent crashes (half
# of them power losses), slow IO and single-replica partitions. Every other
# parameter is still drawn per seed. make swarm-narrow SEEDS=2000
NARROW = --set durability=persisted --set replicas=3 --set crash_ppm=4000 \
	--set restart_ppm=10000 --set power_loss_ppm=500000 --set io_latency_ticks_max=20 \
	--set partition_mode=1 --set partition_ppm=3000 --set unpartition_ppm=5000
swarm-narrow: build
	./$(BIN)/strata-sim swarm --seeds $(SEEDS) --parallel $(PARALLEL) $(NARROW)

clean:
	rm -rf $(BIN)

# Benchmarks (issue 5, cmd/strata-bench). The suite builds and starts its own
# strata-server on a fresh data dir and writes bench/results/<date>-<commit>
# .json and .html. Lengthen each workload with BENCH_FLAGS="--duration 10s".
BENCH_FLAGS ?=

.PHONY: bench bench-compare bench-limits

bench:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/strata-bench ./cmd/strata-bench
	./$(BIN)/strata-bench suite $(BENCH_FLAGS)

# Installs nats-server into .tools/ through the Go module proxy when missing.
bench-compare:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/strata-bench ./cmd/strata-bench
	./$(BIN)/strata-bench compare nats $(BENCH_FLAGS)

bench-limits:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/strata-bench ./cmd/strata-bench
	./$(BIN)/strata-bench limits
