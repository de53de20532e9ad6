# kubectl-ray. `make demo` and `make test` are the two commands a fresh machine needs (see README).
SHELL := /bin/bash
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS := -X github.com/kubectl-ray/kubectl-ray/pkg/version.Version=$(VERSION) -X github.com/kubectl-ray/kubectl-ray/pkg/version.Commit=$(COMMIT)
BIN     := bin/kubectl-ray
# go test's own timeout, under CI's 90 minutes.
TEST_TIMEOUT ?= 75m

.PHONY: build test unit e2e demo sandbox-build sandbox-up sandbox-down vet clean

build:
	CGO_ENABLED=0 go build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-ray

# The benchmarks (build tag bench) are vetted too, so the code behind every speed claim compiles.
vet:
	go vet ./...
	go vet -tags bench ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# Unit tests only: no cluster needed.
unit:
	go test -short -count=1 ./...

# Unit and end-to-end tests. The e2e package builds the sandbox, all three operators, on first use (over 10 minutes cold; see README).
test: vet sandbox-build
	go test -count=1 -timeout $(TEST_TIMEOUT) ./...
	cd hack/alerts && go test -count=1 ./...
	cd hack/chart && go test -count=1 ./...

e2e: sandbox-build
	go test -count=1 -timeout $(TEST_TIMEOUT) ./test/e2e/...

# The demo: builds the plugin and the sandbox with only the operator it runs (KubeRay v1.1.1),
# starts it, reproduces seed 000, tears down.
demo: build
	go run ./hack/sandbox build --operator v1.1.1
	go run ./hack/demo --bin $(BIN)

# Every operator version the tests run (v1.1.1, v1.5.0, v1.6.0, v1.7.0).
sandbox-build:
	go run ./hack/sandbox build

sandbox-up:
	go run ./hack/sandbox up $(ARGS)

sandbox-down:
	go run ./hack/sandbox down $(ARGS)

clean:
	rm -rf bin dist .sandbox

# --- Shipping (docs/index.md: install, releasing) ---
PREFIX ?= $(HOME)/.local/bin

.PHONY: install release-snapshot release-check watchdog-manifest docs

# Installs beside KubeRay's plugin: `kubectl ray doctor|heal|chaos|bundle` reach this binary, and a
# kubectl-ray that is not ours is never overwritten (hack/release/install.sh says how).
install: build
	hack/release/install.sh $(BIN) $(PREFIX)

# All six binaries, archives and checksums in dist/, nothing published.
release-snapshot:
	"$$(hack/tools/install.sh goreleaser)" release --snapshot --clean

# goreleaser check, the snapshot, ldflags and CGO checks, the krew manifest through krew's validator
# and a krew install from the local archive.
release-check:
	hack/release/check.sh

# Names the release's image in the chart and docs/deploy/watchdog.yaml: make watchdog-manifest
# VERSION=v1.2.3 [DIGEST=sha256:...] sets the chart's version and appVersion (the image tag) and
# renders watchdog.yaml and monitoring.yaml from the chart (docs/deploy/README.md).
watchdog-manifest:
	cd hack/chart && go run . version $(VERSION) && go run . render $(if $(DIGEST),-digest $(DIGEST))

# docs/reference from the cobra tree; pkg/cmd/docs's test fails when it is stale.
docs:
	go run ./hack/docgen docs/reference
	cp docs/rules.md pkg/diagnose/rules.md
