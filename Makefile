# wavecd build, test and demo entry points. `make help` lists them.
SHELL := bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/wavecd/wavecd/internal/buildinfo.Version=$(VERSION) \
           -X github.com/wavecd/wavecd/internal/buildinfo.Commit=$(COMMIT)
SHARED ?= ../shared
# The main module builds and tests without cgo, as the image's static binary
# does: with cgo, Kustomize's import of Go's plugin package makes the
# linker export every symbol, 20 MB of tables, and keep more code (144 MB
# against 101 MB). The race detector needs cgo: test-race sets it again.
MAIN_GO := CGO_ENABLED=0 $(GO)
TEST_TIMEOUT ?= 25m

.PHONY: help chromium gitea argocd-cli argocd-api test-argocdapi generate chart-sync image lint-image bench-bootstrap bench-peers argocd-peer flux-peer build localcluster-karpenter karpenter tigera operators rehearse rehearse-race test test-main test-race test-localcluster lint conformance fuzz fuzz-short chaos demo demo-stop bench clean FORCE

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

CONTROLLER_GEN ?= $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0

generate: ## regenerate deepcopy code and CRDs from api/v1alpha1, then the install artifacts (chart-sync)
	$(CONTROLLER_GEN) object paths=./api/... crd:crdVersions=v1 output:crd:dir=./api/v1alpha1/crds
	$(MAKE) chart-sync

# The chart's version follows the latest release tag (v1.2.3 -> version
# 1.2.3, appVersion v1.2.3, the image tag); without a tag it stays as it is.
RELEASE_TAG ?= $(shell git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null)
CHART := deploy/helm/wavecd

chart-sync: ## copy the CRDs and the notification catalog into the Helm chart (CRDs into the kustomize base too), regenerate the base and the chart's golden files
	rm -f $(CHART)/files/crds/*.yaml deploy/kustomize/crds/*.yaml
	cp api/v1alpha1/crds/*.yaml $(CHART)/files/crds/
	cp api/v1alpha1/crds/*.yaml deploy/kustomize/crds/
	cp internal/notify/catalog.yaml $(CHART)/files/notifications-catalog.yaml
	@if [ -n "$(RELEASE_TAG)" ]; then \
	  sed -E -e 's/^version: .*/version: $(patsubst v%,%,$(RELEASE_TAG))/' -e 's/^appVersion: .*/appVersion: $(RELEASE_TAG)/' \
	    $(CHART)/Chart.yaml > $(CHART)/Chart.yaml.tmp && mv $(CHART)/Chart.yaml.tmp $(CHART)/Chart.yaml; \
	  sed -E -e 's#(image: ghcr.io/wavecd/wavecd:).*#\1$(RELEASE_TAG)#' deploy/kustomize/components/plugin-sidecar/kustomization.yaml > plugin-sidecar.tmp && \
	    mv plugin-sidecar.tmp deploy/kustomize/components/plugin-sidecar/kustomization.yaml; \
	fi
	$(GO) test -count=1 ./deploy/ -run '^(TestChartGolden|TestKustomizeBaseGenerated)$$' -update

IMAGE ?= ghcr.io/wavecd/wavecd:$(VERSION)

image: ## build the container image ghcr.io/wavecd/wavecd:VERSION (IMAGE=...) with docker, podman or buildah
	deploy/build-image.sh $(IMAGE) $(VERSION) $(COMMIT)

lint-image: ## lint the Dockerfile with hadolint (PATH, bin/, its image, or its release binary)
	deploy/lint-image.sh

build: bin/wavecd bin/wavecd-localcluster ## build bin/wavecd and bin/wavecd-localcluster

bin/wavecd: FORCE
	$(MAIN_GO) build -ldflags "$(LDFLAGS)" -o $@ ./cmd/wavecd

bin/wavecd-localcluster: FORCE
	cd localcluster && $(GO) build -o ../$@ ./cmd/wavecd-localcluster

localcluster-karpenter: ## build Karpenter's KWOK provider (localcluster/bin/karpenter-kwok) and copy its CRDs (localcluster/bin/karpenter-crds/)
	GO=$(GO) localcluster/karpenter/build.sh localcluster/bin

karpenter: ## build Karpenter's KWOK provider and copy its CRDs next to bin/wavecd-localcluster (bin/karpenter-kwok, bin/karpenter-crds/), for wavecd rehearse
	GO=$(GO) localcluster/karpenter/build.sh bin

tigera: ## build the Tigera operator next to bin/wavecd-localcluster (bin/tigera-operator), for wavecd rehearse
	GO=$(GO) localcluster/tigera/build.sh bin

gitea: ## build Gitea from the Go module proxy (bin/gitea), the real server the SCM provider and pull request generators' tests run
	GO=$(GO) test/gitea/build.sh bin

# The argocdapi module (the gateway that serves Argo CD's gRPC API, and its
# tests with the real argocd CLI) needs Argo CD's Go: 1.27.
ARGOCDAPI_GO := cd $(CURDIR)/argocdapi && GOTOOLCHAIN=go1.27.3 $(GO)

argocd-cli: ## build the argocd CLI (Argo CD v3.6.1) from the Go module proxy into bin/argocd, which the argocdapi tests run
	$(ARGOCDAPI_GO) build -ldflags "-X github.com/argoproj/argo-cd/v3/common.version=$$($(ARGOCDAPI_GO) list -m -f '{{.Version}}' github.com/argoproj/argo-cd/v3 | sed 's/^v//')" \
	  -o $(CURDIR)/bin/argocd github.com/argoproj/argo-cd/v3/cmd

argocd-api: ## build the gateway that serves Argo CD's gRPC API over wavecd's REST API (bin/wavecd-argocd-api)
	$(ARGOCDAPI_GO) build -o $(CURDIR)/bin/wavecd-argocd-api ./cmd/wavecd-argocd-api

operators: karpenter tigera ## build the operators the local cluster runs as processes: Karpenter's KWOK provider and the Tigera operator

REHEARSE_EXAMPLE ?= examples/calico-karpenter
RUNS ?= 10

rehearse: build karpenter ## rehearse each scenario of the Calico/Karpenter example once; HTML reports in _artifacts/rehearse/
	@mkdir -p _artifacts/rehearse
	@for s in no-health no-health-lbc no-health-lbc-same-wave health-gated static-nodes; do \
	  bin/wavecd rehearse $(REHEARSE_EXAMPLE) --scenario $$s --report _artifacts/rehearse/$$s.html; \
	  code=$$?; if [ $$code -ne 0 ] && [ $$code -ne 3 ]; then exit $$code; fi; \
	done

RACE ?= no-health-lbc

rehearse-race: build karpenter ## run scenario RACE (default no-health-lbc) RUNS times (default 10), count converged and stalled runs; report in _artifacts/rehearse/race-RACE.html
	@mkdir -p _artifacts/rehearse
	bin/wavecd rehearse $(REHEARSE_EXAMPLE) --scenario $(RACE) --runs $(RUNS) --report _artifacts/rehearse/race-$(RACE).html \
	  --workspace .wavecd/rehearse-race || [ $$? -eq 3 ]

test: chromium build gitea argocd-cli lint test-main test-race test-localcluster test-argocdapi fuzz-short conformance ## lint, run every test of both modules (the 5-run chaos harness among them), the controller's again under the race detector, each fuzz target briefly and the health conformance suite

# The web UI's browser tests drive Chromium (Debian's package, or
# WAVECD_CHROMIUM): say how to get it before minutes go to other packages.
WAVECD_CHROMIUM ?= /usr/bin/chromium

chromium:
	@[ -x "$(WAVECD_CHROMIUM)" ] || { echo "make test needs Chromium at $(WAVECD_CHROMIUM) for the web UI's browser tests: apt-get install -y chromium (Debian; .ci/run does it), or set WAVECD_CHROMIUM"; exit 1; }

test-main: ## tests of the main module (each package with a cluster starts its own)
	WAVECD_LOCALCLUSTER=$(CURDIR)/bin/wavecd-localcluster WAVECD_GITEA=$(CURDIR)/bin/gitea $(MAIN_GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# The controller hands apps between reconciles, sync runners (internal/operation) and their
# writes: its tests run again under the race detector.
RACE_PACKAGES ?= ./internal/controller/ ./internal/operation/ ./internal/appstatus/

test-race: ## the controller's tests under the race detector
	WAVECD_LOCALCLUSTER=$(CURDIR)/bin/wavecd-localcluster CGO_ENABLED=1 $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(RACE_PACKAGES)

test-localcluster: ## tests of the localcluster module
	cd localcluster && $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# The OpenID provider the argocd CLI signs in through (argocd login --sso):
# the main module's test provider, as a process of its own.
bin/wavecd-test-idp: FORCE
	$(MAIN_GO) build -o $@ ./internal/testenv/idp/cmd/wavecd-test-idp

test-argocdapi: bin/wavecd-test-idp ## tests of the argocdapi module: the gateway, and the real argocd CLI against wavecd
	$(ARGOCDAPI_GO) vet ./...
	cd $(CURDIR)/argocdapi && WAVECD_LOCALCLUSTER=$(CURDIR)/bin/wavecd-localcluster WAVECD_BIN=$(CURDIR)/bin/wavecd ARGOCD_CLI=$(CURDIR)/bin/argocd \
	  WAVECD_TEST_IDP=$(CURDIR)/bin/wavecd-test-idp \
	  GOTOOLCHAIN=go1.27.3 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# golangci-lint builds from the Go module proxy on first use (about a
# minute), then runs from Go's build cache; its own cache keeps reruns fast.
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT ?= $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint: ## gofmt, go vet and golangci-lint (.golangci.yml) on both modules
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd localcluster && $(GO) vet ./...
	$(GOLANGCI_LINT) run ./...
	cd localcluster && $(GOLANGCI_LINT) run --config ../.golangci.yml ./...

FUZZTIME ?= 30s
# make test fuzzes by execution count, not by time: with a time budget, Go's
# fuzz coordinator before Go 1.27 can fail a target with "context deadline
# exceeded" when the budget ends while a starved worker is mid-call.
FUZZ_SHORT ?= 2000x
# package:target of every fuzz target; seed corpora in each package's testdata/fuzz/.
FUZZ_TARGETS := \
  ./internal/render:FuzzDecodeManifests \
  ./internal/source:FuzzJoin \
  ./internal/source:FuzzTreeResolve \
  ./internal/sync:FuzzSyncOptionsAndAnnotations \
  ./internal/health:FuzzLuaHealth \
  ./internal/server:FuzzWebhookPayload \
  ./internal/rbac:FuzzPolicy \
  ./internal/appset:FuzzTemplate

fuzz: ## run each fuzz target for FUZZTIME (default 30s); a failing input is saved under the package's testdata/fuzz/
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
	  $(MAIN_GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

fuzz-short: ## each fuzz target for FUZZ_SHORT executions (default 2000x), as make test runs them
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SHORT)

chaos: build ## the chaos harness: RUNS runs (default 10) of kill -9, API server restarts and Git outages; table in _artifacts/chaos/table.md
	@mkdir -p _artifacts/chaos
	WAVECD_LOCALCLUSTER=$(CURDIR)/bin/wavecd-localcluster $(MAIN_GO) test -count=1 -timeout 0 -v -run '^TestChaos$$' ./internal/chaos/ \
	  -args -runs=$(RUNS) -table=$(CURDIR)/_artifacts/chaos/table.md

conformance: bin/wavecd ## Argo CD's built-in health fixtures through `wavecd health eval`
	@test -x $(SHARED)/conformance/run-builtin-health || { echo "conformance suite not found at $(SHARED)/conformance (set SHARED=...)"; exit 1; }
	python3 $(SHARED)/conformance/run-builtin-health bin/wavecd

demo: build ## rehearse the health-check example with Argo CD's Lua fix (wavecd up) until it settles
	cd examples/healthcheck-poc && ../../bin/wavecd up --fresh --settings settings/app-health-lua.yaml --exit-when-settled
	@echo "kubeconfig: examples/healthcheck-poc/.wavecd/kubeconfig; make demo-stop removes the cluster"

demo-stop: ## stop and remove the demo's local cluster
	cd examples/healthcheck-poc && ../../bin/wavecd down

bench-bootstrap: build ## the shared wave-bootstrap benchmark against wavecd (waves, waves-instant, idle)
	bench/wave-bootstrap.sh waves
	bench/wave-bootstrap.sh waves-instant
	bench/wave-bootstrap.sh idle

# The peers of bench-peers, built from the Go module proxy in nested
# modules (bench/peers/*/go.mod: a require, the peer's replace lines and a
# tool line; nothing of theirs is kept here). Argo CD wants Go 1.27, which
# the go command takes from the proxy.
ARGOCD_MODULE := github.com/argoproj/argo-cd/v3
ARGOCD_GO := cd $(CURDIR)/bench/peers/argocd && GOTOOLCHAIN=go1.27.3 $(GO)
argocd-peer: ## build Argo CD (application controller, repo server) from the Go module proxy for bench-peers (about 25 min cold)
	$(ARGOCD_GO) build -ldflags "-X $(ARGOCD_MODULE)/common.version=$$($(ARGOCD_GO) list -m -f '{{.Version}}' $(ARGOCD_MODULE) | sed 's/^v//')" -o $(CURDIR)/bin/argocd $(ARGOCD_MODULE)/cmd
	dir=$$($(ARGOCD_GO) list -m -f '{{.Dir}}' $(ARGOCD_MODULE)) && rm -rf bin/argocd-crds bin/argocd-tools && \
	  mkdir -p bin/argocd-crds bin/argocd-tools && cp $$dir/manifests/crds/*-crd.yaml bin/argocd-crds/ && \
	  cp $$dir/hack/git-verify-wrapper.sh $$dir/hack/gpg-wrapper.sh $$dir/hack/git-ask-pass.sh bin/argocd-tools/ && \
	  chmod u+w bin/argocd-crds/* bin/argocd-tools/* && chmod a+x bin/argocd-tools/*

flux-peer: ## build Flux's source-controller and kustomize-controller from the Go module proxy for bench-peers
	cd bench/peers/flux-source && $(GO) build -o $(CURDIR)/bin/flux-source-controller github.com/fluxcd/source-controller
	cd bench/peers/flux-kustomize && $(GO) build -o $(CURDIR)/bin/flux-kustomize-controller github.com/fluxcd/kustomize-controller
	src=$$(cd bench/peers/flux-source && $(GO) list -m -f '{{.Dir}}' github.com/fluxcd/source-controller) && \
	ks=$$(cd bench/peers/flux-kustomize && $(GO) list -m -f '{{.Dir}}' github.com/fluxcd/kustomize-controller) && \
	  rm -rf bin/flux-crds && mkdir -p bin/flux-crds && cp $$src/config/crd/bases/*.yaml $$ks/config/crd/bases/*.yaml bin/flux-crds/ && \
	  chmod u+w bin/flux-crds/*

PEERS ?= wavecd,argocd,flux
bench-peers: build argocd-peer flux-peer ## wavecd side by side with Argo CD and Flux on fresh local clusters: idle at 200 and 1,000 apps, 7 waves (bench/peers/peers.py)
	python3 bench/peers/peers.py --engines $(PEERS) --scenario idle --count 200 --rounds 2
	python3 bench/peers/peers.py --engines $(PEERS) --scenario idle --count 1000
	python3 bench/peers/peers.py --engines $(PEERS) --scenario waves --rounds 2

bench: build ## benchmarks of both modules
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd localcluster && $(GO) test -run '^$$' -bench . -benchtime 3x ./e2e/

clean: ## remove build outputs
	rm -rf bin
