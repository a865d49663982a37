package hfremote_test

import (
	"context"
	"fmt"
	"io"

	"github.com/ggufkit/gguf/hfremote"
	"github.com/ggufkit/gguf/hfremote/hubtest"
)

// Open a file of a Hub repo (here the loopback Hub), read a window of it
// with one range request, then stream two tensor-like ranges in order.
func ExampleOpen() {
	hub, err := hubtest.NewServer("", hubtest.Options{})
	if err != nil {
		panic(err)
	}
	defer hub.Close()
	hub.Commit("org/model-GGUF", "main", map[string]hubtest.Content{
		"model-Q4_K_M.gguf": hubtest.PatternContent(1, 3<<20),
	})

	f, err := hfremote.Open(context.Background(), "hf://org/model-GGUF/model-Q4_K_M.gguf",
		hfremote.Options{Endpoint: hub.URL(), Anonymous: true})
	if err != nil {
		panic(err)
	}
	defer f.Close()
	header := make([]byte, 1<<20)
	if _, err := f.ReadAt(header, 0); err != nil {
		panic(err)
	}
	r := f.Ranges(context.Background(), []hfremote.Range{{Off: 2 << 20, Len: 4096}, {Off: 2<<20 + 5000, Len: 100}}, hfremote.RangeOptions{})
	n, err := io.Copy(io.Discard, r)
	r.Close()
	if err != nil {
		panic(err)
	}
	st := f.Stats()
	fmt.Printf("%d bytes at commit %.7s…, sha256 %.12s…\n", f.Size(), f.Commit(), f.SHA256())
	fmt.Printf("ranges gave %d bytes; %d requests, %d bytes received, %d discarded\n", n, st.Requests, st.Bytes, st.WastedBytes)
	// Output:
	// 3145728 bytes at commit 925d8c4…, sha256 2497fcaf8b81…
	// ranges gave 4196 bytes; 3 requests, 1053676 bytes received, 904 discarded
}
