# framerated: the two README commands and the install target.
#   make run    install what is missing, build, start the daemon in the foreground
#   make test   install what is missing, build, run every test suite
#   make install / make uninstall   PREFIX=/usr/local, DESTDIR= for staging
#   make bench  release build, then the performance table of docs/performance.md
#   make fuzz   the libFuzzer targets of Tests/Fuzz, FUZZ_SECONDS (default 60) each
#   make deb    .build/deb/{framerated,libframerate1,libframerate-dev}_<version>_amd64.deb, checked by lintian
SHELL := /bin/bash
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
DOCDIR ?= $(PREFIX)/share/doc/framerated
# systemd searches both /usr/lib and /usr/local/lib (never /etc: that is the admin's).
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
CONFIGURATION ?= debug
SWIFT ?= swift
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# Debian packages the build and the tests need (liburing-dev: the tick plane's io_uring sends;
# dpkg-dev, lintian: make deb;
# python3-venv: the OpenRPC test's venv; man-db: the install test's `man framectl`;
# locales: the ps_AF locale the C client's test compiles, whose decimal point is two bytes).
DEBIAN_PACKAGES := pkg-config libsystemd-dev systemd liburing-dev dpkg-dev lintian python3-venv man-db locales

# The version: Sources/FrameRateVersion/FrameRateVersion.swift is the one place it is
# kept. The git commit goes to every swift build (Package.swift turns it into a C define);
# from a tarball there is none, and --version prints the version alone.
VERSION := $(shell sed -n 's/.*static let semantic = "\(.*\)".*/\1/p' Sources/FrameRateVersion/FrameRateVersion.swift)
FRAMERATED_GIT_COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell \
  [ -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && echo -dirty)
export FRAMERATED_GIT_COMMIT
# Every release build links the Swift runtime statically, so one build serves
# test-realtime, install and deb, and the binaries run without the toolchain (no RUNPATH:
# nothing is looked up beside them). RELRO and immediate binding (dpkg-buildflags'
# hardening=+all, as the package's C library gets): the dynamic relocations are resolved
# at start and then made read-only.
RELEASE := -c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
DEB_DIR := .build/deb
MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

.PHONY: deps build run test test-swift test-clients python-package test-realtime test-trace test-openrpc test-deb sanitize \
  fuzz fuzz-smoke install uninstall man completions deb clean

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

## test: every test suite, the sanitizers, and each fuzz target for a short, bounded time.
test: build test-swift test-openrpc test-clients test-realtime test-trace test-deb sanitize fuzz-smoke

# Unit tests run in parallel; the integration tests measure tick rates on a 2-core
# machine, so they run one at a time, and the systemd end-to-end and restart tests run
# alone, one after the other, with their "cannot run here" skip turned into a failure.
test-swift:
	bin="$$($(SWIFT) build -c $(CONFIGURATION) --show-bin-path)"; \
	$(SWIFT) test -c $(CONFIGURATION) --skip-build --skip IntegrationTests && \
	FRAMERATED_BIN_DIR="$$bin" $(SWIFT) test -c $(CONFIGURATION) --skip-build --filter IntegrationTests --skip 'Systemd(EndToEnd|Restart)Tests' --no-parallel && \
	FRAMERATED_BIN_DIR="$$bin" FRAMERATED_REQUIRE_SYSTEMD_E2E=1 $(SWIFT) test -c $(CONFIGURATION) --skip-build --filter 'Systemd(EndToEnd|Restart)Tests' --no-parallel

## test-clients: the Python package (built as an sdist and a wheel by `python -m build` in the
## venv .build/python-venv, the wheel installed there, mypy --strict, then pytest) and the C library
## (its make test: ASan/UBSan parser fuzz, daemon and event-loop tests, install check), each
## against the built framerated.
PYTHON_VENV := .build/python-venv
PYTHON_DIST := .build/python-dist
test-clients: deps python-package
	$(SWIFT) build -c $(CONFIGURATION) --product framerated
	@set -e; bin="$$($(SWIFT) build -c $(CONFIGURATION) --show-bin-path)"; \
	echo "mypy --strict clients/python/src/framerate"; \
	$(PYTHON_VENV)/bin/python -m mypy --strict --cache-dir .build/mypy-cache clients/python/src/framerate; \
	echo "pytest clients/python/tests (the installed wheel; FRAMERATED_BIN_DIR=$$bin)"; \
	FRAMERATED_BIN_DIR="$$bin" $(PYTHON_VENV)/bin/python -m pytest -q -p no:cacheprovider clients/python/tests; \
	$(MAKE) --no-print-directory -C clients/c test FRAMERATED_BIN_DIR="$$bin"

## python-package: the Python client's sdist and wheel in .build/python-dist (`python -m build`,
## from PyPI into the venv .build/python-venv with mypy and pytest), the wheel installed in the venv.
python-package:
	@set -e; export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore; \
	if [ ! -x $(PYTHON_VENV)/bin/python ]; then \
	  python3 -m venv $(PYTHON_VENV) 2>/dev/null || { rm -rf $(PYTHON_VENV); echo "installing python3-venv"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv && \
	    python3 -m venv $(PYTHON_VENV); }; \
	fi; \
	$(PYTHON_VENV)/bin/python -m pip install --quiet build mypy pytest; \
	rm -rf $(PYTHON_DIST); \
	echo "python -m build clients/python"; \
	$(PYTHON_VENV)/bin/python -m build --outdir $(PYTHON_DIST) clients/python >$(PYTHON_DIST).log 2>&1 || { cat $(PYTHON_DIST).log; exit 1; }; \
	$(PYTHON_VENV)/bin/python -c 'import glob, sys, tarfile, zipfile; \
	  wheel = zipfile.ZipFile(glob.glob("$(PYTHON_DIST)/framerate-*.whl")[0]).namelist(); \
	  sdist = tarfile.open(glob.glob("$(PYTHON_DIST)/framerate-*.tar.gz")[0]).getnames(); \
	  missing = [n for n in ("framerate/py.typed", "framerate/aio.py") if n not in wheel] + \
	    [n for n in ("src/framerate/py.typed", "README.md", "pyproject.toml") if not any(s.endswith(n) for s in sdist)]; \
	  sys.exit(f"missing from the packages: {missing}" if missing else 0)'; \
	ls $(PYTHON_DIST); \
	$(PYTHON_VENV)/bin/python -m pip install --quiet --force-reinstall --no-deps $(PYTHON_DIST)/framerate-*.whl

## test-realtime: the release daemon under attack (Tests/Realtime/test_attacks.py: floods from an
## unprivileged user must not cost a root 120 Hz link its ticks) and its wake-ups (test_wakeups.py).
## Release, because the bounds are the product's real-time promise; pytest is installed if missing.
test-realtime: deps
	$(SWIFT) build $(RELEASE) --product framerated
	@set -e; bin="$$($(SWIFT) build $(RELEASE) --show-bin-path)"; \
	python3 -m pip --version >/dev/null 2>&1 || { echo "installing python3-pip"; DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip; }; \
	python3 -m pytest --version >/dev/null 2>&1 || PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet pytest; \
	echo "pytest Tests/Realtime (FRAMERATED_BIN_DIR=$$bin)"; \
	FRAMERATED_BIN_DIR="$$bin" python3 -m pytest -q -p no:cacheprovider Tests/Realtime

## test-trace: framectl trace against the daemon, the file decoded with Perfetto's published
## protos (PyPI perfetto + protobuf, in a venv under .build) and its counts checked.
test-trace: deps
	$(SWIFT) build -c $(CONFIGURATION) --product framerated
	$(SWIFT) build -c $(CONFIGURATION) --product framectl
	Tests/Trace/run.sh "$$($(SWIFT) build -c $(CONFIGURATION) --show-bin-path)"

## test-openrpc: rpc.discover read by the PyPI openrpc package's document model, its schemas
## checked and real results validated with jsonschema (Tests/OpenRPC), in .build/openrpc-venv.
OPENRPC_VENV := .build/openrpc-venv
test-openrpc: deps
	$(SWIFT) build -c $(CONFIGURATION) --product framerated
	@set -e; [ -x $(OPENRPC_VENV)/bin/python ] || python3 -m venv $(OPENRPC_VENV); \
	$(OPENRPC_VENV)/bin/python -c 'import openrpc, jsonschema, pytest' 2>/dev/null || \
	  $(OPENRPC_VENV)/bin/pip install --quiet --disable-pip-version-check 'openrpc>=10' 'jsonschema>=4' pytest; \
	bin="$$($(SWIFT) build -c $(CONFIGURATION) --show-bin-path)"; \
	echo "pytest Tests/OpenRPC (FRAMERATED_BIN_DIR=$$bin)"; \
	FRAMERATED_BIN_DIR="$$bin" $(OPENRPC_VENV)/bin/python -m pytest -q -p no:cacheprovider Tests/OpenRPC

## test-deb: the package under a real systemd (Tests/IntegrationTests/Scripts/systemd-e2e.sh
## --deb): dpkg -i, the socket, a non-root framectl register and status, man framectl, remove, purge.
test-deb: deb
	Tests/IntegrationTests/Scripts/systemd-e2e.sh --deb $(DEB_DIR)/*.deb

## sanitize: the unit tests under AddressSanitizer and ThreadSanitizer, each in its own build
## directory (.build-asan, .build-tsan) so the ordinary build is not rebuilt. LeakSanitizer is
## off: everything it reports is test helpers' NIO SocketAddress boxes (held in Swift enum
## payloads, whose spare tag bits hide the pointer from LSan: even a `static let` global is
## reported), not daemon memory; the daemon's leaks are checked by Tests/Realtime/test_chaos.py
## (descriptors and RSS after 1,000 killed clients). Memory errors (overflow, use after
## free) still fail the run.
sanitize: deps
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --sanitize=address --scratch-path .build-asan --skip IntegrationTests
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan --skip IntegrationTests

## fuzz: build the libFuzzer targets (ASan, release) and run each for FUZZ_SECONDS seconds
## (default 60); FUZZ_RUNS=N runs N executions instead. A finding fails the target and
## leaves its input in .build/fuzz/artifacts/<target>/ (docs/security.md, "Fuzzing").
FUZZ_SECONDS ?= 60
fuzz: deps
	SWIFT=$(SWIFT) FUZZ_SECONDS=$(FUZZ_SECONDS) Tests/Fuzz/run.sh

## fuzz-smoke: each fuzz target for 45 s (what make test runs): the Dispatcher target's
## replay of its committed corpus under ASan alone takes about 30 s of that.
fuzz-smoke: deps
	SWIFT=$(SWIFT) FUZZ_SECONDS=45 Tests/Fuzz/run.sh

## install: release build (static Swift runtime); binaries, units, sysusers.d, man pages,
## completions and docs under $(DESTDIR)$(PREFIX). Without DESTDIR it also creates the
## users and reloads systemd; it never enables anything.
install: deps man completions
	$(SWIFT) build $(RELEASE) --product framerated
	$(SWIFT) build $(RELEASE) --product framectl
	bin="$$($(SWIFT) build $(RELEASE) --show-bin-path)"; \
	install -D -m 0755 -t "$(DESTDIR)$(BINDIR)" "$$bin/framerated" "$$bin/framectl"
	install -d "$(DESTDIR)$(UNITDIR)"
	for unit in framerated.service framerated.socket; do \
	  sed -e 's|/usr/local/bin|$(BINDIR)|g' -e 's|/usr/local/share/doc/framerated|$(DOCDIR)|g' \
	    "systemd/$$unit" >"$(DESTDIR)$(UNITDIR)/$$unit" && chmod 0644 "$(DESTDIR)$(UNITDIR)/$$unit" || exit 1; \
	done
	install -D -m 0644 systemd/framerated.sysusers "$(DESTDIR)$(SYSUSERSDIR)/framerated.conf"
	install -D -m 0644 -t "$(DESTDIR)$(DOCDIR)" README.md docs/*.md
	install -D -m 0644 .build/man/framectl.1 "$(DESTDIR)$(MANDIR)/man1/framectl.1"
	install -D -m 0644 .build/man/framerated.8 "$(DESTDIR)$(MANDIR)/man8/framerated.8"
	for tool in framectl framerated; do \
	  install -D -m 0644 ".build/completions/$$tool.bash" "$(DESTDIR)$(BASHCOMPDIR)/$$tool" && \
	  install -D -m 0644 ".build/completions/_$$tool" "$(DESTDIR)$(ZSHCOMPDIR)/_$$tool" && \
	  install -D -m 0644 ".build/completions/$$tool.fish" "$(DESTDIR)$(FISHCOMPDIR)/$$tool.fish" || exit 1; \
	done
	@if [ -z "$(DESTDIR)" ]; then \
	  systemd-sysusers "$(SYSUSERSDIR)/framerated.conf" || exit 1; \
	  if [ -d /run/systemd/system ]; then systemctl daemon-reload || exit 1; fi; \
	  echo "installed; start it with: systemctl enable --now framerated.socket"; \
	fi

## uninstall: stop and remove what install put there (the framerated users stay).
uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
	  systemctl disable --now framerated.socket framerated.service 2>/dev/null || true; \
	fi
	rm -f "$(DESTDIR)$(BINDIR)/framerated" "$(DESTDIR)$(BINDIR)/framectl" \
	  "$(DESTDIR)$(UNITDIR)/framerated.service" "$(DESTDIR)$(UNITDIR)/framerated.socket" \
	  "$(DESTDIR)$(SYSUSERSDIR)/framerated.conf" \
	  "$(DESTDIR)$(MANDIR)/man1/framectl.1" "$(DESTDIR)$(MANDIR)/man8/framerated.8"
	for tool in framectl framerated; do \
	  rm -f "$(DESTDIR)$(BASHCOMPDIR)/$$tool" "$(DESTDIR)$(ZSHCOMPDIR)/_$$tool" "$(DESTDIR)$(FISHCOMPDIR)/$$tool.fish"; \
	done
	rm -rf "$(DESTDIR)$(DOCDIR)"
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi

## man: framectl(1) and framerated(8) in .build/man, from the argument parser
## (swift-argument-parser's generate-manual plugin, run on the debug build) plus the
## sections --help does not carry (environment, files, signals, exit status, examples,
## see also), kept in docs/man/*.sections, in place of the generated generic EXIT STATUS
## (blank lines of the discussions become .Pp, which mdoc wants).
man: deps
	$(SWIFT) package plugin generate-manual --configuration $(CONFIGURATION) >/dev/null
	@set -e; mkdir -p .build/man; for page in framectl:1 framerated:8; do \
	  tool=$${page%%:*}; section=$${page##*:}; \
	  sed -e "s/^\.Dt \([A-Z]*\) 1/.Dt \1 $$section/" ".build/plugins/GenerateManual/outputs/$$tool/$$tool.1" | \
	    awk -v extra="docs/man/$$tool.$$section.sections" \
	      '/^\.Sh "?EXIT STATUS"?$$/ { while ((getline line < extra) > 0) print line; skip = 1; done = 1; next } \
	       /^\.Sh / { skip = 0 } skip { next } /^$$/ { print ".Pp"; next } { print } \
	       END { if (!done) while ((getline line < extra) > 0) print line }' >".build/man/$$tool.$$section"; \
	  echo "man: .build/man/$$tool.$$section"; \
	done

## completions: bash, zsh and fish completion scripts for framectl and framerated in
## .build/completions, generated by the binaries themselves (swift-argument-parser); the
## bash scripts lose their #! line (bash-completion sources them; lintian warns otherwise).
completions: deps
	$(SWIFT) build $(RELEASE) --product framerated
	$(SWIFT) build $(RELEASE) --product framectl
	@set -e; bin="$$($(SWIFT) build $(RELEASE) --show-bin-path)"; mkdir -p .build/completions; \
	for tool in framectl framerated; do \
	  "$$bin/$$tool" --generate-completion-script bash | sed '1{/^#!/d}' >".build/completions/$$tool.bash"; \
	  "$$bin/$$tool" --generate-completion-script zsh >".build/completions/_$$tool"; \
	  "$$bin/$$tool" --generate-completion-script fish >".build/completions/$$tool.fish"; \
	done

## deb: three packages in $(DEB_DIR) from `make install DESTDIR=… PREFIX=/usr` and the C
## client library's install into /usr/lib/$(MULTIARCH), split as Debian does
## (systemd/debian/build-deb.sh): framerated, libframerate<soname major> (the shared
## library) and libframerate-dev (header, static library, libframerate.so, framerate.pc);
## then lintian (errors fail; its remaining informational tags: docs/operations.md, "Lintian").
deb: deps
	rm -rf .build/deb && mkdir -p .build/deb
	$(MAKE) --no-print-directory install DESTDIR=$(abspath .build/deb/root) PREFIX=/usr \
	  UNITDIR=/usr/lib/systemd/system SYSUSERSDIR=/usr/lib/sysusers.d
	@# The C library for the package: built apart, with Debian's hardening flags (fortified
	@# functions, stack protector, RELRO and immediate binding), as dpkg-buildflags gives them,
	@# and without -Werror: a distribution's newer compiler or flags warn, they do not fail.
	export DEB_BUILD_MAINT_OPTIONS=hardening=+all; \
	$(MAKE) --no-print-directory -C clients/c install DESTDIR=$(abspath .build/deb/root) PREFIX=/usr \
	  LIBDIR=/usr/lib/$(MULTIARCH) B=$(abspath .build/deb/c-build) WERROR= \
	  CFLAGS="$$(dpkg-buildflags --get CFLAGS)" CPPFLAGS="$$(dpkg-buildflags --get CPPFLAGS)" \
	  LDFLAGS="$$(dpkg-buildflags --get LDFLAGS)"
	systemd/debian/build-deb.sh .build/deb/root "$(VERSION)" "$(FRAMERATED_GIT_COMMIT)" $(DEB_DIR)

## bench: release build, then the benchmark of docs/performance.md (a few minutes; needs the
## instruments in ../shared/bench, which build with gcc and run dbus-daemon; valgrind counts
## the tick plane's instructions, `framebench tick-cost` under callgrind).
## NS="100 1000 2000 4000" DURATION=5 REPEAT=3 PROCESSES=2 BENCH_DIR=../shared/bench override.
bench: DEBIAN_PACKAGES += gcc dbus-daemon valgrind
bench: deps
	Tests/Benchmarks/run.sh

clean:
	rm -rf .build
