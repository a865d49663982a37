# Static, cgo-free binaries for the host and the devices (the seeds' TV box
# runs a 32-bit ARM userland on a 64-bit kernel, so both ARM flavours are
# built). CGO_ENABLED=0 everywhere: with a C compiler present, go build
# would otherwise link the host binary against libc for net and os/user.
GO      ?= go
LDFLAGS := -s -w
OUT     := dist
# gguf --version: the module version and commit, stamped so that builds
# without VCS information (-buildvcs=false, a source tarball) still say them.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
STAMP   := -X main.buildVersion=$(VERSION) -X main.buildCommit=$(COMMIT)

.PHONY: build test device clean

build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(STAMP)' -o $(OUT)/gguf ./cmd/gguf

test:
	$(GO) test ./...

device:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS) $(STAMP)' -o $(OUT)/gguf-linux-arm64 ./cmd/gguf
	CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=7 $(GO) build -trimpath -ldflags '$(LDFLAGS) $(STAMP)' -o $(OUT)/gguf-linux-armv7 ./cmd/gguf
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS) $(STAMP)' -o $(OUT)/gguf-darwin-arm64 ./cmd/gguf

clean:
	rm -rf $(OUT)
