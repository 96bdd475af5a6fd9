# berth: build, run and test.
#
#   make run     set up this machine (root), build, run berth on the examples
#   make check   the fast lane, minutes and no containerd: vet, gofmt check,
#                golangci-lint (.golangci.yml) and the unit tests
#   make test    set up this machine (root), make check, the end-to-end tests,
#                then the conformance smoke set
#   make unit    unit tests only, no containerd needed
#   make lint    golangci-lint alone (built from tools/lint on first use)
#   make difftest  berth against upstream Kubernetes (tools/difftest)
#   make fuzz    every fuzz target for FUZZTIME (default 30s) each;
#                FUZZ=regexp picks targets (hack/fuzz.sh)
#   make cluster set up this machine (root), run a loopback control plane and a
#                berth node joined to it, with kube-proxy, CoreDNS and a default
#                StorageClass (local-provisioner); prints the kubectl command line
#   make cluster-tools  build the control plane binaries, metrics-server,
#                local-provisioner, containerd 2.x, kube-proxy and CoreDNS (cached; 14-22 min cold,
#                containerd2 2-6 min of it)
#   make network-tools  build only kube-proxy and CoreDNS (tools/kube, tools/coredns)
#   make containerd2  build only containerd 2.x and its runc shim (tools/containerd2)
#   make bench   berth and the upstream kubelet side by side (docs/performance.md);
#                BENCH_ARGS="-repeats 1 -bursts 10 -steady 20s" for a quick look
#   make simbench  berth simulate, kwok and kubemark side by side at 100, 500
#                and 1000 simulated nodes (hack/simbench.sh, test/simbench);
#                SIMBENCH_ARGS="-sizes 5,20 -window 20s" for a quick look
#   make soak    berth and the upstream kubelet through churn, crashes, a runtime
#                restart, CRI faults and an API outage (docs/reliability.md; hours);
#                SOAK_ARGS="-churn-cycles 100 -outage 1m" for a shorter run
#   make e2e-slow  the end-to-end checks that wait on the API's own clocks
#                (a pod certificate's refresh: about 10 minutes), not in make test
#   make conformance-smoke  the few conformance specs make test runs
#   make conformance  the upstream e2e [NodeConformance] specs against a berth
#                node (KUBELET=upstream: the upstream kubelet); builds e2e.test
#                (tools/conformance, long cold); docs/conformance.md;
#                CONFORMANCE_SET=storage: upstream's single-node storage specs
#                (In-tree Volumes local/hostPath/hostPathSymlink/emptydir,
#                PersistentVolumes-local, projected volumes) instead
#   PKGS=...     limit test and unit to some packages (default ./...)
#   BERTH_CONTAINERD=2  run, test, cluster, bench and conformance on containerd
#                2.x built from tools/containerd2 instead of the host's
#                containerd (Debian's 1.6), on /run/berth-containerd2
#
# The node set-up (hack/node-setup.sh) installs and starts containerd with the
# berth CNI network and imports the locally built test images; it is
# idempotent and takes seconds once done.

SHELL := /bin/bash
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
GOFMT := $(shell $(GO) env GOROOT)/bin/gofmt
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)
# BERTH_CONTAINERD=2: containerd 2.x (tools/containerd2) instead of the
# host's containerd, for every target that runs pods (hack/node-setup.sh).
BERTH_CONTAINERD ?= 1
export BERTH_CONTAINERD
ifeq ($(BERTH_CONTAINERD),2)
CRI_ENDPOINT ?= unix:///run/berth-containerd2/containerd.sock
else
CRI_ENDPOINT ?= unix:///run/containerd/containerd.sock
endif
BERTH_CONFIG := $(CURDIR)/examples/kubelet-config.yaml
# Packages to test, e.g. make unit PKGS=./internal/pod/podplan/...
PKGS ?= ./...
export GO

.PHONY: all build node run check lint upstream-src test unit e2e e2e-slow difftest fuzz vet fmt-check clean cluster cluster-tools control-plane-tools network-tools containerd2 bench soak conformance conformance-smoke simulate-image

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/berth ./cmd/berth

node:
	@bash hack/node-setup.sh

run: node build
	@bash hack/run-hints.sh
	exec bin/berth --config $(BERTH_CONFIG) --container-runtime-endpoint=$(CRI_ENDPOINT)

# The fast lane (STYLE rule 21): everything that needs no containerd, so a
# mistake fails in minutes. upstream-src first: unit tests pin tables to
# upstream's source and, in CI, fail when it is missing.
check: vet fmt-check lint upstream-src unit

# make check, then the end-to-end packages (E2E_PKGS) against containerd
# and a real API server, then the conformance smoke set
# (hack/conformance-smoke.txt): upstream NodeConformance specs that must
# pass on berth, a few minutes. control-plane-tools, not cluster-tools:
# make test neither builds nor runs kube-proxy and CoreDNS (the smoke set
# runs without them).
test: node check difftest control-plane-tools e2e
	@CONFORMANCE_SMOKE=1 KUBELET=berth bash hack/conformance.sh

# The packages that run pods on the host's containerd (the CRI behaviour
# suite included) or start a control plane.
E2E_PKGS ?= ./test/e2e/... ./test/cluster/... ./internal/platform/cri/critest/... ./test/soak/... ./test/simulate/...

# -p 1: one test binary at a time. End-to-end tests share one containerd, and
# a berth agent removes every CRI pod it was not asked to run, so two packages
# testing at once would remove each other's pods.
# flock: end-to-end runs on one machine (two clones, a bench) take turns on
# the one containerd. -o: flock holds the lock itself and the tests do not
# inherit its descriptor, so a process a test leaves behind cannot hold the
# lock after the run.
e2e:
	BERTH_CRI_ENDPOINT=$(CRI_ENDPOINT) BERTH_E2E=1 flock -o /tmp/berth-e2e.lock $(GO) test -race -count=1 -p 1 -timeout 45m $(E2E_PKGS)

# The end-to-end checks make test leaves out for their length (BERTH_E2E_SLOW).
e2e-slow: node control-plane-tools
	BERTH_CRI_ENDPOINT=$(CRI_ENDPOINT) BERTH_E2E=1 BERTH_E2E_SLOW=1 flock -o /tmp/berth-e2e.lock $(GO) test -race -count=1 -p 1 -timeout 30m -run 'TestPodCertificateVolume' ./test/e2e/

# The conformance smoke set alone (make test runs it).
conformance-smoke:
	@CONFORMANCE_SMOKE=1 KUBELET=berth bash hack/conformance.sh

# The development control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl) from the tools/ modules, built into
# _output/tools/bin once and again only when a pinned version changes; then
# the Service network (network-tools).
cluster-tools: control-plane-tools network-tools

# The control plane, metrics-server, the registry, local-provisioner and
# containerd 2.x alone
# (what make test needs).
control-plane-tools:
	@bash hack/cluster-build.sh

# kube-proxy (tools/kube) and CoreDNS (tools/coredns), which make cluster and
# make conformance run; a stamp of their own.
network-tools:
	@bash hack/cluster-build.sh --network

# containerd 2.x (tools/containerd2), which the e2e tests of the CRI event
# stream start privately; cluster-tools builds it too.
containerd2:
	@bash hack/cluster-build.sh --containerd2

# The control plane on 127.0.0.1 and a berth node joined to it (see
# hack/cluster.sh); Ctrl-C stops both.
cluster:
	@bash hack/cluster.sh

# The image of berth simulate's Deployment (examples/simulate), as an OCI
# archive in _output/images (hack/simulate-image.sh).
simulate-image:
	@bash hack/simulate-image.sh

# berth simulate, kwok and kubemark's hollow nodes side by side at 100, 500
# and 1000 nodes (hack/simbench.sh, test/simbench; an hour or more). Never
# part of make test. SIMBENCH_ARGS="-sizes 5,20 -window 20s" for a quick look.
.PHONY: simbench
simbench:
	@bash hack/simbench.sh $(SIMBENCH_ARGS)

# Side-by-side benchmark against the upstream kubelet (hack/bench.sh): two
# configurations (shared, defaults), bursts of 30 and 100 pods, density 250,
# berth's heap profiles; BENCH_ARGS go to test/bench/cmd/bench.
bench:
	@bash hack/bench.sh $(BENCH_ARGS)

# The soak suite, berth and upstream side by side (test/soak); make test
# runs its short version on berth alone (TestSoakShort, in E2E_PKGS).
soak:
	@bash hack/soak.sh $(SOAK_ARGS)

# The upstream conformance suite's node specs on berth's development cluster
# (hack/conformance.sh). Never part of make test: e2e.test alone is a long
# cold build. KUBELET=upstream runs the upstream kubelet instead of berth;
# CONFORMANCE_SET=storage runs upstream's single-node storage specs instead
# of the NodeConformance set; CONFORMANCE_FOCUS, CONFORMANCE_SKIP and
# CONFORMANCE_PROCS narrow the run.
KUBELET ?= berth
conformance:
	@KUBELET=$(KUBELET) bash hack/conformance.sh

# Unit tests: every package, with the end-to-end ones skipping themselves
# (they run only with BERTH_E2E=1, as make e2e).
unit:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

lint:
	@GO=$(GO) bash hack/lint.sh

# The upstream source unit tests pin tables to (internal/testkit/upstreamsrc):
# the modules of tools/kube's build list at its pins (k8s.io/kubernetes, its
# staging modules, cadvisor, ...), downloaded without building anything;
# seconds once the module cache has them.
upstream-src:
	cd tools/kube && $(GO) mod download

# Differential tests that run upstream Kubernetes code against berth's, in
# a module of their own (berth's never requires k8s.io/kubernetes). They
# compile one small upstream package: 17 s with an empty build cache, 2 s
# when the standard library is built.
difftest:
	cd tools/difftest && $(GO) vet ./... && $(GO) test -count=1 ./...

# Fuzzing is never part of make test: there the seed corpora in
# testdata/fuzz run as ordinary tests.
FUZZTIME ?= 30s
fuzz:
	@FUZZTIME=$(FUZZTIME) FUZZ='$(FUZZ)' bash hack/fuzz.sh

vet:
	$(GO) vet ./...

# Every Go file but generated output, hidden directories and testdata.
fmt-check:
	@files=$$(find . \( -path './_output' -o -path './bin' -o -path './.*' -o -name testdata \) -prune \
		-o -name '*.go' -print0 | xargs -0r $(GOFMT) -l); \
	if [[ -n $$files ]]; then echo "gofmt -l lists files to format:"; echo "$$files"; exit 1; fi

clean:
	rm -rf bin _output
