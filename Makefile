# Static, cgo-free binaries for the devices (the seeds' TV box runs a 32-bit
# ARM userland on a 64-bit kernel, so both ARM flavours are built).
GO      ?= go
LDFLAGS := -s -w
OUT     := dist

.PHONY: build test device clean

build:
	$(GO) build -o $(OUT)/gguf ./cmd/gguf

test:
	$(GO) test ./...

device:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(OUT)/gguf-linux-arm64 ./cmd/gguf
	CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=7 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(OUT)/gguf-linux-armv7 ./cmd/gguf
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(OUT)/gguf-darwin-arm64 ./cmd/gguf

clean:
	rm -rf $(OUT)
