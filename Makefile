# The two commands of the README: `make run` and `make test`. Both set the machine up first.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export SWIFT
# Extra arguments for `make run`, e.g. make run ARGS="--unit oz"
ARGS ?=

.PHONY: all setup build run test bench clean

all: build

setup:
	@scripts/setup

build: setup
	$(SWIFT) build -c release --product forcescale
	$(SWIFT) build -c release --product forcescaled

# No live-device support yet: the scale runs on its built-in synthetic demo.
run: build
	@"$$($(SWIFT) build -c release --show-bin-path)/forcescale" demo $(ARGS)

# Every test: unit, golden replays of ../shared/recordings, and the CLI end to end.
test: setup
	$(SWIFT) build
	FORCESCALE_BIN_DIR="$$($(SWIFT) build --show-bin-path)" $(SWIFT) test

bench: setup
	bench/replay

clean:
	$(SWIFT) package clean
