package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ggufBin is the command built once for the tests, so they see exactly
// what users see: exit codes, stdout and stderr.
var ggufBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gguf-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ggufBin = filepath.Join(dir, "gguf")
	out, err := exec.Command("go", "build", "-o", ggufBin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building gguf: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one run of the command.
type result struct {
	stdout, stderr []byte
	code           int
}

// runGGUF runs the command with args, stdin from in (nil: empty).
func runGGUF(t testing.TB, in io.Reader, args ...string) result {
	t.Helper()
	cmd := exec.Command(ggufBin, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &so, &se, in
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{so.Bytes(), se.Bytes(), code}
}

// mustRun runs the command and fails the test unless it exits 0.
func mustRun(t testing.TB, in io.Reader, args ...string) result {
	t.Helper()
	r := runGGUF(t, in, args...)
	if r.code != 0 {
		t.Fatalf("gguf %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// checkOneLineError checks the conventions for failures: the given exit
// code, one line on stderr starting "gguf: ", no panic or goroutine dump.
func checkOneLineError(t testing.TB, r result, code int, mentions string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d (stderr %q)", r.code, code, r.stderr)
	}
	msg := string(r.stderr)
	if strings.Count(strings.TrimRight(msg, "\n"), "\n") != 0 || !strings.HasPrefix(msg, "gguf: ") {
		t.Errorf("stderr is not one 'gguf: ' line: %q", msg)
	}
	if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
		t.Errorf("stderr shows a crash: %q", msg)
	}
	if !strings.Contains(msg, mentions) {
		t.Errorf("stderr %q does not mention %q", msg, mentions)
	}
}
