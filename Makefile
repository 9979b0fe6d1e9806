# llmtop — two commands do all the set-up on a fresh machine:
#   make run    start llmtop on its embedded default (the simulated engine)
#   make test   vet, format check and the race-enabled test suite
#   make dist   the release builds in dist/ (scripts/dist.sh, docs/release.md)
#
# Go modules come through the module proxy on first build; Debian packages
# the tests need (tmux, gcc for -race/cgo, prometheus for promtool) are installed with apt-get when
# missing.

GO       ?= go
BIN      := bin/llmtop
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION) -X main.commit=$(shell git rev-parse HEAD 2>/dev/null)
# go-nvml's C headers use deprecated declarations; silence the noise.
export CGO_CFLAGS ?= -O2 -Wno-deprecated-declarations
export CGO_ENABLED ?= 1

.PHONY: all build run run-routed test lint vet fmt-check engine-flags bench fuzz monitor-cost costs e2e e2e-mouse test-faults test-memory engines test-engines test-fleet deps dist dist-deps test-dist clean

all: build

deps:
	@command -v gcc >/dev/null 2>&1 || { echo "installing gcc (needed for cgo and -race)"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq gcc libc6-dev; }
	@command -v g++ >/dev/null 2>&1 || { echo "installing g++ (make lint checks the engine builds' C++ flags)"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq g++; }
	@command -v tmux >/dev/null 2>&1 || { echo "installing tmux (needed for the terminal tests)"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq tmux; }
	@command -v jq >/dev/null 2>&1 || { echo "installing jq (make test-fleet reads Prometheus's API with it)"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq jq; }
	@{ command -v promtool && command -v prometheus; } >/dev/null 2>&1 || { echo "installing prometheus (promtool checks the exports and rules; make test-fleet runs the server)"; $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends prometheus; }

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

build: deps
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/llmtop

# make stays llmtop's parent (it has no exec) and, leading the session when
# it is a tmux pane's command, gets the terminal's SIGHUP instead of llmtop,
# then waits for it. make runs this one-command recipe without a shell in
# between, and llmtop ends by itself when its terminal goes away (a read
# ends or a write fails): `make e2e` kills such a pane and checks that
# nothing is left.
run: build
	./$(BIN) demo

# The routed fleet: a router in front of prefill and decode pools, cycling
# through its scenarios (docs/routed-fleets.md).
run-routed: build
	./$(BIN) demo --routed cycle

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "not gofmt-ed:"; echo "$$out"; exit 1; fi

# The engine builds' -march flags leave AMX off (Ollama's cgo build does not link
# with it): checked with the compilers alone, on every CPU.
engine-flags:
	./scripts/engines.sh check-flags

lint: vet fmt-check engine-flags

test: deps lint
	$(GO) test -race -count=1 -timeout 30m ./...

bench: deps build
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...
	./scripts/startup.sh

# Every Go fuzz target for FUZZTIME each (default 30s; CI runs 3s each):
# the Prometheus parser, the adapters' mappings, /slots, Ollama JSON, the SSE
# reader, the log catalogue and stats and its per-request latencies, the
# Prometheus API answers and their values, the sanitiser, the config parser.
FUZZTIME ?= 30s
fuzz: deps
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz.sh

# The whole monitor's CPU and memory over 60 s against the simulator (a
# measurement, not a test: not in CI).
monitor-cost: build
	./scripts/monitor-cost.sh

# Issue 33's cost lines in one go, three rounds each with medians: a day's
# recording (open, seek, diagnose --from), the fleet refresh at 500 and
# 2 000 replicas, the monitor's floor (a measurement, not in CI).
costs: deps
	./scripts/costs.sh

# The real terminal: tmux drives the built binary.
e2e: build
	./scripts/e2e.sh
	./scripts/e2e-mouse.sh
	./scripts/e2e-run.sh

# The mouse alone: clicks, a double click and the wheel typed into tmux.
e2e-mouse: build
	./scripts/e2e-mouse.sh

# Hostile endpoints (hung, 100 MB, gzip bomb, stalled body, redirect loop):
# the fault is named right, a key still shows within 1 s, memory stays
# bounded.
test-faults: build
	./scripts/faults.sh

# Hostile input under a memory limit of a few hundred MB (a Prometheus
# answering 9 090 targets and 100 000 series a query, 200 MiB answers):
# each case ends with a clear error or a bounded result, never Go's
# out-of-memory crash; prints each case's peak RSS.
test-memory: build
	./scripts/memory.sh

# Real engines (Ollama, llama-server) built once under ~/.cache/llmtop/engines.
engines:
	./scripts/engines.sh build

test-engines: build
	./scripts/engines.sh test

# The fleet with a real Prometheus (Debian's prometheus, from make deps):
# three `llmtop sim` replicas, `llmtop export`, the rules from `llmtop
# rules` firing in Prometheus, and `llmtop --prometheus` reading it back
# (about a minute).
test-fleet: build
	./scripts/test-fleet.sh

# Release builds (docs/release.md): linux/amd64 and linux/arm64 with NVML that
# start on glibc 2.17 or newer, darwin/amd64 and darwin/arm64 without NVML;
# each a single file and an archive (man page, completions), SHA256SUMS and
# install.sh in dist/. Reproducible: the same commit gives the same bytes.
dist: dist-deps
	./scripts/dist.sh dist

# gcc, the arm64 cross compiler and its C library, and qemu-user to run the
# arm64 build, from Debian (jq and python3 for make test-dist).
dist-deps:
	@command -v gcc >/dev/null 2>&1 || { echo "installing gcc (make dist builds linux/amd64 with cgo)"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq gcc libc6-dev; }
	@command -v jq >/dev/null 2>&1 || { echo "installing jq (make test-dist reads llmtop's JSON with it)"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq jq; }
	@command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && [ -f /usr/aarch64-linux-gnu/lib/libc.so.6 ] || { echo "installing the arm64 cross compiler (make dist builds linux/arm64 with cgo)"; $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu; }
	@command -v qemu-aarch64 >/dev/null 2>&1 || { echo "installing qemu-user (make test-dist runs the arm64 build)"; $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends qemu-user; }
	@command -v python3 >/dev/null 2>&1 || { echo "installing python3 (make test-dist serves the release with http.server)"; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq python3; }

# make dist, then test it (scripts/dist-test.sh): checksums, the glibc floor,
# both Linux builds run (arm64 under qemu) with and without
# libnvidia-ml.so.1, also on Debian 11's glibc 2.31; the install script
# against a local file server; and a second and third build from clean
# clones compared byte for byte; go install …@latest from an empty module
# cache, with and without a C compiler.
test-dist: dist
	./scripts/dist-test.sh dist
	./scripts/dist-test.sh repro
	./scripts/dist-test.sh goinstall

clean:
	rm -rf bin dist build
