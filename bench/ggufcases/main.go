// Command ggufcases writes the generated GGUF test cases of
// internal/fixture (every malformed file, the header-only files in both
// padding forms, a valid model) into a folder, one NAME.gguf each, for
// bench/gguf-verdicts.sh to put in front of ggml's own loader.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ggufkit/gguf/internal/fixture"
)

func main() {
	dir := flag.String("o", "", "folder to write the cases into")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: ggufcases -o DIR")
		os.Exit(2)
	}
	for _, c := range fixture.VerdictCases() {
		if err := os.WriteFile(filepath.Join(*dir, c.Name+".gguf"), c.Data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
