# The two commands of the README: `make run` and `make test`. Both set the machine up first.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export SWIFT
# Options for the watch client of `make run`, e.g. make run ARGS="--unit oz"
ARGS ?=

.PHONY: all setup build run test bench clean

all: build

setup:
	@scripts/setup

build: setup
	$(SWIFT) build -c release --product forcescale
	$(SWIFT) build -c release --product forcescaled

# forcescaled on the best readable pressure device (the built-in demo's recording, played in
# a loop, when there is none) on a private socket, and `forcescale watch` on it in the
# foreground; the daemon stops when watch does (Ctrl-C). See scripts/run.
run: build
	@FORCESCALE_BIN_DIR="$$($(SWIFT) build -c release --show-bin-path)" scripts/run $(ARGS)

# Every test: unit, golden replays of ../shared/recordings, the CLI end to end, then the
# real-kernel scenarios (natively when /dev/uinput is usable, otherwise in a VM booted from
# Debian's kernel: about 6 minutes; see docs/testing.md).
test: setup
	$(SWIFT) build
	FORCESCALE_BIN_DIR="$$($(SWIFT) build --show-bin-path)" $(SWIFT) test
	FORCESCALE_VM_TIMEOUT=$${FORCESCALE_VM_TIMEOUT:-1800} scripts/kernel-tests "$$($(SWIFT) build --show-bin-path)/forcescale-kernel-tests"

bench: setup
	bench/replay
	bench/live

clean:
	$(SWIFT) package clean
