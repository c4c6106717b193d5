# ralph — build, test and demo. `make help` lists the targets.

GO        ?= go
BIN       := bin/ralph
AGENTS    ?= $(CURDIR)/.cache/agents
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
FUZZTIME  ?= 15s

.PHONY: all help build test unit e2e vet demo bench lint agents fuzz golden docs clean soak stress screenshot cross dist dist-check

all: lint test build

help:
	@echo "make demo    run the bundled two-hat example with a scripted agent (no API key)"
	@echo "make test    go vet, unit tests with -race, end-to-end tests (installs the agent CLIs)"
	@echo "make build   build $(BIN)"
	@echo "make bench   run the benchmarks and write BENCHMARKS.md (jq, if installed, is timed beside ralph events)"
	@echo "make lint    gofmt, go vet, golangci-lint and the layering rules"
	@echo "make cross   build ralph and go vet everything for each platform it is released for"
	@echo "make dist    the release archives for every platform and their checksums, into dist/ (a snapshot; nothing is published)"
	@echo "make dist-check  check .goreleaser.yaml"
	@echo "make agents  install the pinned agent CLIs from npm into $(AGENTS)"
	@echo "make fuzz    run every fuzz target (parsers, loaders, state files) for $(FUZZTIME) each"
	@echo "make golden  rewrite golden files from the current output"
	@echo "make docs    write docs/cli.md and the key reference of docs/configuration.md from the code"
	@echo "make screenshot  retake docs/serve.png, ralph serve's page during a two-slot autopilot (needs chromium)"
	@echo "make soak    a $(SOAK_ITERATIONS)-iteration run with 8 followers and a status poller; checks for leaks"
	@echo "make stress  make test $(STRESS_RUNS) times in a row beside 4 CPU-bound processes and an fsync writer"

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ralph

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout 30m -skip E2E ./...

# The end-to-end tests drive the real agent CLIs; RALPH_AGENTS_DIR tells them
# where `make agents` put them (without it they skip). The page's browser
# test saves its screenshots under $(ARTEFACTS).
ARTEFACTS ?= $(CURDIR)/bin/artefacts
e2e: agents
	RALPH_AGENTS_DIR=$(AGENTS) RALPH_ARTEFACTS=$(ARTEFACTS) $(GO) test -count=1 -timeout 30m -run 'E2E|TestAgents' ./cmd/ralph/ ./internal/fakemodel/

test: vet unit e2e

agents:
	bash internal/agents/install.sh $(AGENTS)

demo: build
	@bash examples/demo/run.sh $(CURDIR)/$(BIN)

# The Go benchmarks, then the whole-process driver (internal/benchrun), which
# times the built binary beside a shell loop, jq and grep and writes
# BENCHMARKS.md with every figure beside its target.
# The cluster's scale benchmark runs small here (one round of its 40
# slots); RALPH_BENCH_CLUSTER_TASKS=1000 make bench runs it at full size.
RALPH_BENCH_CLUSTER_TASKS ?= 40

bench: build
	@mkdir -p bin
	RALPH_BENCH_CLUSTER_TASKS=$(RALPH_BENCH_CLUSTER_TASKS) $(GO) test -run '^$$' -bench . -benchmem -timeout 60m ./... | tee bin/gobench.txt
	$(GO) run ./internal/benchrun -ralph $(BIN) -many -gobench bin/gobench.txt -out BENCHMARKS.md

# golangci-lint (configured in .golangci.yml) runs staticcheck among its
# linters; go run fetches this pinned version through the module proxy.
GOLANGCI_LINT ?= github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

lint: vet
	$(GO) run $(GOLANGCI_LINT) run ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) test -count=1 -run TestLayering ./internal/layering/

fuzz:
	GO=$(GO) internal/fuzz/fuzz.sh $(FUZZTIME)

# The platforms ralph is released for. Tests run on Linux only; `make cross`
# proves the rest build and pass go vet, test files included.
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

cross:
	@set -e; for p in $(PLATFORMS); do \
		echo "go build ./cmd/ralph, go vet ./... for $$p"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -o /dev/null ./cmd/ralph; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./...; \
	done

# Releases are made by goreleaser (.goreleaser.yaml), pinned here and run
# with go run, so nothing is installed.
GORELEASER ?= github.com/goreleaser/goreleaser/v2@v2.15.1

dist:
	$(GO) run $(GORELEASER) release --snapshot --clean

dist-check:
	$(GO) run $(GORELEASER) check

# The soak test: one long run with a tiny agent while 8 `ralph events -f`
# and a `ralph status --json` poller run beside it (cmd/ralph/soak_test.go).
SOAK_ITERATIONS ?= 2000
soak:
	RALPH_SOAK_ITERATIONS=$(SOAK_ITERATIONS) $(GO) test -count=1 -timeout 2h -run '^TestSoak$$' -v ./cmd/ralph/

# The suite must pass on a busy machine: make test, STRESS_RUNS times in a
# row, under load (internal/stress/stress.sh).
STRESS_RUNS ?= 5
stress: agents
	bash internal/stress/stress.sh $(STRESS_RUNS) $(MAKE) test

# The README's picture of ralph serve's page, taken by the page's browser
# test (cmd/ralph/serve_page_e2e_test.go) while a two-slot autopilot runs.
screenshot:
	RALPH_SERVE_SCREENSHOT=$(CURDIR)/docs/serve.png $(GO) test -count=1 -run '^TestServePageAutopilotE2E$$' ./cmd/ralph/

# Only these packages keep golden files; -update comes from internal/golden.
golden:
	$(GO) test ./cmd/ralph/ ./config/ ./events/ ./hats/ ./view/ -update

# docs/cli.md is written from kong's model of the command line, and the key
# reference of docs/configuration.md from the JSON Schema, by the tests that
# check them (cmd/ralph/clidoc_test.go, config/reference_test.go); `make
# golden` writes them too.
docs:
	$(GO) test -count=1 -run '^(TestCLIReferenceIsCurrent|TestConfigurationReferenceIsCurrent)$$' ./cmd/ralph/ ./config/ -update

clean:
	rm -rf bin
