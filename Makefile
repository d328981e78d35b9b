# The README's two commands:
#   make run   — the simulator against the reference coordinator, on the embedded fakes
#   make test  — every test tier (formatting and vet, unit and simulation, real services)
GO ?= go
SEED ?= 1
SEEDS ?= 20
WORKSPACES ?= 50
DURATION ?= 24h

# Is a Docker engine answering? The real tier needs one; without it the real tests
# report themselves as skipped (never as passed).
HAVE_DOCKER := $(shell docker info >/dev/null 2>&1 && echo 1 || echo 0)

.PHONY: run test lint images tests example bench build

run:
	$(GO) run ./cmd/converge sim --seed $(SEED) --seeds $(SEEDS) --workspaces $(WORKSPACES) --duration $(DURATION)

test: lint images tests

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Local images for the real tier (no registry needed). Skipped when there is no
# Docker engine, or when CONVERGE_SKIP_IMAGE_BUILD=1 (a user with a registry then
# gets the official images, see images/README.md).
images:
ifeq ($(HAVE_DOCKER),1)
	@if [ "$${CONVERGE_SKIP_IMAGE_BUILD:-0}" = 1 ]; then echo "images: build skipped (CONVERGE_SKIP_IMAGE_BUILD=1)"; else bash images/build.sh; fi
else
	@echo "images: no Docker engine answers; the real tier will be reported as skipped"
endif

# go test over every package. With a Docker engine the real tier is required
# (CONVERGE_REQUIRE_REAL=1: a real test that cannot start its services fails), and
# Python 3 always is (CONVERGE_REQUIRE_PYTHON=1: the driver protocol's Python client
# and example fail rather than skip without it; CONVERGE_REQUIRE_PYTHON=0 lets them skip).
# One package per core, go test's default: more at a time gained nothing measurable
# (docs/decisions/test-tiers.md, DR172). TEST_PACKAGES=N runs N at a time. The black-box runs
# (the oracle daemon's, and the workspace drills of converge conform) wait on real time
# for minutes with little CPU of their own, so they run in a go test of their own beside
# the rest instead of holding one of their places (DR173); their output follows.
TEST_PACKAGES ?=
BESIDE := github.com/wsconverge/converge/sim/oracle/conform github.com/wsconverge/converge/sim/workspace/conform
tests:
	eval "$$(bash images/env.sh)"; \
	export CONVERGE_REQUIRE_REAL=$${CONVERGE_REQUIRE_REAL:-$(HAVE_DOCKER)}; \
	export CONVERGE_REQUIRE_PYTHON=$${CONVERGE_REQUIRE_PYTHON:-1}; \
	beside=$$(mktemp); \
	$(GO) test -count=1 -timeout 45m $(BESIDE) >"$$beside" 2>&1 & pid=$$!; \
	$(GO) test -count=1 $(if $(TEST_PACKAGES),-p $(TEST_PACKAGES)) -timeout 45m $$($(GO) list ./... | grep -vxF $(foreach p,$(BESIDE),-e $(p))); rc=$$?; \
	wait $$pid; brc=$$?; cat "$$beside"; rm -f "$$beside"; \
	[ $$rc -eq 0 ] && [ $$brc -eq 0 ]
	$(MAKE) example

# The worked third-party example: its own module (so ./... above skips it),
# judged by converge's public conformance suite. gofmt is checked by lint.
example:
	cd examples/acme && $(GO) vet ./... && $(GO) test -count=1 -timeout 10m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

build:
	$(GO) build -o bin/converge ./cmd/converge
