# e2atap: the two commands a newcomer needs are `make demo` and `make test`.
GO        ?= go
PKGS      := ./...
BIN       := bin/e2atap
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
FUZZTIME  ?= 30s

.PHONY: all build test test-short lint vet fmt staticcheck bench fuzz demo clean

all: lint test build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/e2atap

# The whole suite, with the race detector. Stays under 10 minutes on 2 cores.
test:
	$(GO) test -race -count=1 -timeout 9m $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

staticcheck:
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@latest
	staticcheck $(PKGS)

# Benchmarks: each compares against a baseline measured in the same run.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 $(PKGS)

# Every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

demo: build
	$(BIN) demo

clean:
	rm -rf bin
