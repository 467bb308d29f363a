# framerated: the two README commands and the install target.
#   make run    install what is missing, build, start the daemon in the foreground
#   make test   install what is missing, build, run every test suite
SHELL := /bin/bash
PREFIX ?= /usr/local
DESTDIR ?=
CONFIGURATION ?= debug
SWIFT ?= swift
# Debian packages the build and the tests need.
DEBIAN_PACKAGES := pkg-config libsystemd-dev

.PHONY: deps build run test test-swift clean

## deps: apt-get install whatever is missing (needs root; skipped when all are present).
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "error: run as root (or install:$$missing)"; exit 1; fi; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

## build: compile the daemon, framectl and the tests.
build: deps
	$(SWIFT) build -c $(CONFIGURATION) --build-tests

## run: build and start framerated in the foreground (Ctrl-C stops it).
run: deps
	$(SWIFT) build -c $(CONFIGURATION) --product framerated
	$(SWIFT) build -c $(CONFIGURATION) --product framectl
	exec "$$($(SWIFT) build -c $(CONFIGURATION) --show-bin-path)/framerated" $(ARGS)

## test: every test suite.
test: build test-swift

test-swift:
	FRAMERATED_BIN_DIR="$$($(SWIFT) build -c $(CONFIGURATION) --show-bin-path)" $(SWIFT) test -c $(CONFIGURATION) --skip-build

clean:
	rm -rf .build
