# e2atap: the two commands a newcomer needs are `make demo` and `make test`.
GO        ?= go
PKGS      := ./...
BIN       := bin/e2atap
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
FUZZTIME  ?= 30s
FUZZMINIMIZE ?= 10x

.PHONY: all build test test-short test-bigendian lint vet fmt staticcheck bench bench-system fuzz demo image clean

all: lint test build

# A static binary, as the image's (deploy/Dockerfile): no dynamic loader at
# every start.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/e2atap

# The whole suite, with the race detector. Stays under 10 minutes on 2 cores.
# E2ATAP_OFFHEAP_POISON: memory the stream tables give back faults when used
# (validate/offheap.go), which the race detector cannot see.
# TEST_FIRST: go test starts packages in the order named (each once), as
# many at a time as there are CPUs; the two longest (about 300 s and 250 s
# under -race) start together and the short ones fill in beside them, instead
# of the second-longest starting last, behind all the short ones.
# -parallel 4: cmd/e2atap's process-level tests that mostly wait run four
# at a time (cmd/e2atap/main_test.go), and so do validate's long tests that
# touch no package state (validate/main_test.go), which use both cores once
# validate runs alone. cmd/e2atap's tests build e2atap once without -race
# for the children that only compute on a corpus (main_test.go: plain).
TEST_FIRST := ./cmd/e2atap ./validate
test:
	E2ATAP_OFFHEAP_POISON=1 $(GO) test -race -count=1 -parallel 4 -timeout 12m $(TEST_FIRST) $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

# The packages that read bytes in place (unsafe) tested on a big-endian
# machine: s390x under qemu-user (apt install qemu-user), -short, about 6
# minutes. The tests of a file that shrinks while mapped are skipped:
# qemu-user reports no fault address for its SIGBUS.
BE_PKGS := ./frame ./e2a ./redact ./exporters/metrics ./tap/ws ./validate
test-bigendian:
	@command -v qemu-s390x >/dev/null || { echo "test-bigendian needs qemu-s390x (apt install qemu-user)"; exit 2; }
	@mkdir -p bin/be && for pkg in $(BE_PKGS); do \
	  t=bin/be/$$(echo $$pkg | tr ./ __).test; \
	  GOARCH=s390x $(GO) test -c -o $$t $$pkg || exit 1; \
	  echo "== $$pkg (s390x)"; (cd $$pkg && qemu-s390x $(CURDIR)/$$t -test.count=1 -test.short -test.skip 'Shrinks|Shrank') || exit 1; \
	done

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)
	@for os in darwin freebsd windows; do echo "GOOS=$$os go vet"; GOOS=$$os $(GO) vet $(PKGS) || exit 1; done

staticcheck:
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@latest
	staticcheck $(PKGS)

# Benchmarks: each compares against a baseline measured in the same run.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 $(PKGS)

# Whole-process benchmarks: the real binary beside jq, a Python loop and
# plain Go programs on the same files, interleaved, by CPU and wall time;
# -only recordlog: validate --log beside jq -c . and a Python rewrite loop.
# BENCH_ARGS passes flags (e.g. BENCH_ARGS='-size 200M -rounds 5'). The live
# part (-only live) drives e2atap run's taps against a real nats-server, kfake
# and a log writer at stepped rates beside each transport's bare client
# (-live-rates, -live-bursts, -live-duration, -live-rounds; see -h).
BENCH_ARGS ?=
bench-system:
	$(GO) run ./internal/benchsys $(BENCH_ARGS)

# Every fuzz target for FUZZTIME each. FUZZMINIMIZE bounds the minimisation
# of each new input (go test -fuzzminimizetime): at Go's default (60s) the
# split fuzzers (FuzzFrameSplit, FuzzSplitWalk: two whole runs an input)
# spent their whole time minimising and ran a few dozen inputs in 30 s; at
# 10x they run thousands. A failing input is still written out, minimised
# less (FUZZMINIMIZE=60s to minimise it further). A target that fails with
# "context deadline exceeded" and writes no failing input hit Go's fuzzing
# coordinator at its -fuzztime deadline (golang/go#75804, fixed in Go 1.27),
# not a defect of ours: it is named and the run goes on; any other failure
# stops it.
fuzz:
	@out=$$(mktemp); trap 'rm -f $$out' EXIT; \
	for pkg in $$($(GO) list $(PKGS)); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; \
	    before=$$(ls $$dir/testdata/fuzz/$$t 2>/dev/null | wc -l); \
	    if E2ATAP_OFFHEAP_POISON=1 $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg >$$out 2>&1; then tail -n 3 $$out; continue; fi; \
	    cat $$out; \
	    after=$$(ls $$dir/testdata/fuzz/$$t 2>/dev/null | wc -l); \
	    if [ "$$after" -eq "$$before" ] && grep -q '^    context deadline exceeded$$' $$out; then \
	      echo "== $$t: no failing input written: Go's fuzzing coordinator at its deadline (golang/go#75804), not a finding"; \
	    else exit 1; fi; \
	  done; \
	done

demo: build
	$(BIN) demo

# The container image of deploy/Dockerfile, tagged with the version
# (IMAGE=registry/e2atap to push elsewhere); docker or podman.
IMAGE   ?= e2atap
BUILDER ?= $(shell command -v docker 2>/dev/null || command -v podman 2>/dev/null || echo docker)
image:
	$(BUILDER) build -f deploy/Dockerfile --build-arg VERSION=$(VERSION) -t $(IMAGE):$(VERSION) .

clean:
	rm -rf bin
