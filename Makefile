# The README's two commands:
#   make run   — the simulator against the reference coordinator, on the embedded fakes
#   make test  — every test tier
GO ?= go
SEED ?= 1
SEEDS ?= 20
WORKSPACES ?= 50
DURATION ?= 24h

.PHONY: run test lint unit bench build

run:
	$(GO) run ./cmd/converge sim --seed $(SEED) --seeds $(SEEDS) --workspaces $(WORKSPACES) --duration $(DURATION)

test: lint unit

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

build:
	$(GO) build -o bin/converge ./cmd/converge
