package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ggufkit/gguf/internal/shared"
)

// hostilePrompt holds an escape sequence that clears the screen; the
// story model spells it with byte tokens, so run prints it back as
// generated text is printed.
const hostilePrompt = "time\x1b[2J"

// TestGeneratedOutputEscapes: the escaping decision is a function of
// "stdout is a terminal and --raw is not given": escaped then, byte for
// byte otherwise.
func TestGeneratedOutputEscapes(t *testing.T) {
	for _, escape := range []bool{true, false} {
		var b bytes.Buffer
		w := generatedOutput(&b, escape)
		io.WriteString(w, hostilePrompt+"\tok\n")
		want := hostilePrompt + "\tok\n"
		if escape {
			want = `time\x1b[2J` + "\tok\n"
		}
		if b.String() != want {
			t.Errorf("escape %v: %q, want %q", escape, b.String(), want)
		}
	}
}

// TestRunTerminalEscapes (issue 23 item 9): on a terminal run escapes
// control characters in the text it prints (newlines kept), --raw prints
// them as they are, and to a pipe the bytes pass unchanged.
func TestRunTerminalEscapes(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	args := []string{"run", model, "-p", hostilePrompt, "-n", "3", "--temp", "0", "--ctx", "64"}
	piped := mustRun(t, nil, args...).stdout
	if !bytes.Contains(piped, []byte("\x1b[2J")) {
		t.Fatalf("to a pipe the bytes changed: %q", piped)
	}
	tty := onTerminal(t, args...)
	if bytes.IndexByte(tty, 0x1b) >= 0 || !bytes.Contains(tty, []byte(`time\x1b[2J`)) || !bytes.HasSuffix(tty, []byte("\n")) {
		t.Errorf("on a terminal: %q", tty)
	}
	if raw := onTerminal(t, append(args, "--raw")...); !bytes.Contains(raw, []byte("\x1b[2J")) {
		t.Errorf("--raw on a terminal: %q", raw)
	}
}

// onTerminal runs the command with stdout on a pseudo-terminal and returns
// what it printed there.
func onTerminal(t *testing.T, args ...string) []byte {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("pseudo-terminal set up for Linux only")
	}
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skip(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skip(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip(err)
	}
	// Raw mode: the terminal passes the bytes as written (no \n -> \r\n).
	tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Skip(err)
	}
	tio.Oflag &^= unix.OPOST
	unix.IoctlSetTermios(int(slave.Fd()), unix.TCSETS, tio)
	cmd := exec.Command(ggufBin, args...)
	var se bytes.Buffer
	cmd.Stdout, cmd.Stderr = slave, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(master) // ends with EIO once the command exits
		got <- b
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gguf %s: %v\n%s", strings.Join(args, " "), err, se.Bytes())
	}
	select {
	case b := <-got:
		return b
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal was never closed")
	}
	return nil
}

// TestRunPromptBounded (issue 23 item 12): run -f reads at most what the
// context can hold: an 8 GiB file under a 4 GB address-space limit is
// refused in one line (it was read whole: an out-of-memory dump). The
// limit leaves the Go runtime room for the threads a loaded machine makes
// it start (1 GB was seen to fail in thread creation under load).
func TestRunPromptBounded(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(8 << 30) // sparse: no disk used
	f.Close()
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	cmd := exec.Command("sh", "-c", `ulimit -v 4000000 && exec "$0" "$@"`, ggufBin, "run", model, "-f", big, "--ctx", "64")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	checkOneLineError(t, result{so.Bytes(), se.Bytes(), code}, exitUsage, "a context of 64 tokens can hold")
	if so.Len() != 0 {
		t.Errorf("stdout %q", so.Bytes())
	}
	// What fits is run, from a file as from stdin.
	prompt := filepath.Join(dir, "p.txt")
	os.WriteFile(prompt, []byte("Once upon a time"), 0o644)
	r := mustRun(t, nil, "run", model, "-f", prompt, "--ctx", "64", "-n", "4", "--temp", "0")
	if !strings.HasPrefix(string(r.stdout), " Once upon a time") {
		t.Errorf("-f: %q", r.stdout)
	}
	checkOneLineError(t, runGGUF(t, strings.NewReader(strings.Repeat("Once upon a time ", 40)), "run", model, "-f", "-", "--ctx", "64"),
		exitUsage, "the prompt is")
}

// TestFloatFlagsFinite (issue 23 item 14): NaN and infinities are refused
// by every float flag, in the same words.
func TestFloatFlagsFinite(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	for _, c := range [][]string{
		{"--temp", "NaN"}, {"--top-p", "nan"}, {"--min-p", "NaN"}, {"--repeat-penalty", "NaN"},
		{"--repeat-penalty", "Inf"}, {"--temp", "+Inf"}, {"--moe-bias", "NaN"}, {"--moe-bias", "Inf"}, {"--moe-topp", "NaN"},
	} {
		args := append([]string{"run", model, "-p", "x", "-n", "1", "--ctx", "16"}, c...)
		checkOneLineError(t, runGGUF(t, nil, args...), exitUsage, "--"+strings.TrimPrefix(c[0], "--")+" ")
		checkOneLineError(t, runGGUF(t, nil, args...), exitUsage, ": must be a finite number")
	}
	checkOneLineError(t, runGGUF(t, nil, "perplexity", model, "-f", model, "--moe-bias", "NaN"), exitUsage, "--moe-bias NaN: must be a finite number")
}

// TestRunLlamaCppFlags (issue 23 item 16): llama.cpp's single-dash long
// flags and the llama-cli flags people carry over work as there.
func TestRunLlamaCppFlags(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	base := []string{"run", model, "-p", "Once upon a time", "-n", "8", "--temp", "0", "--ctx", "64"}
	want := mustRun(t, nil, base...).stdout

	// Accepted and ignored, each with a note; -fa with or without a value.
	for _, extra := range [][]string{{"-ngl", "0"}, {"-ngl", "99"}, {"--n-gpu-layers", "all"}, {"-fa"}, {"-fa", "on"}, {"-fa", "off"}, {"--flash-attn", "auto"}, {"-tb", "2"}} {
		r := mustRun(t, nil, append(slices.Clone(base), extra...)...)
		if !bytes.Equal(r.stdout, want) || !strings.Contains(string(r.stderr), "ignored") {
			t.Errorf("%v: stdout %q (want %q), stderr %s", extra, r.stdout, want, r.stderr)
		}
	}
	// The value of -p is not a flag.
	if r := mustRun(t, nil, "run", model, "-p", "-ngl", "-n", "1", "--ctx", "16"); !strings.HasPrefix(string(r.stdout), " -ngl") {
		t.Errorf("-p -ngl printed %q", r.stdout)
	}
	// --no-display-prompt prints only the generated text.
	r := mustRun(t, nil, append(slices.Clone(base), "--no-display-prompt")...)
	if string(r.stdout) != strings.TrimPrefix(string(want), " Once upon a time") {
		t.Errorf("--no-display-prompt: %q, want the end of %q", r.stdout, want)
	}
	// -r stops at the text, which is printed.
	r = mustRun(t, nil, "run", model, "-p", "Once upon a time", "-n", "60", "--temp", "0", "--ctx", "128", "-r", "Lily")
	if !strings.HasSuffix(string(r.stdout), "Lily\n") || !strings.Contains(string(r.stderr), "stopped: reverse prompt") {
		t.Errorf("-r Lily: %q\n%s", r.stdout, r.stderr)
	}
	// -e: \x4f is O.
	if r := mustRun(t, nil, "run", model, "-e", "-p", `\x4fnce upon a time`, "-n", "8", "--temp", "0", "--ctx", "64"); !bytes.Equal(r.stdout, want) {
		t.Errorf("-e: %q, want %q", r.stdout, want)
	}
	// --prompt-file, as -f; -no-cnv after -cnv turns the conversation off.
	prompt := filepath.Join(t.TempDir(), "p.txt")
	os.WriteFile(prompt, []byte("Once upon a time"), 0o644)
	if r := mustRun(t, nil, "run", model, "--prompt-file", prompt, "-n", "8", "--temp", "0", "--ctx", "64", "-cnv", "-no-cnv"); !bytes.Equal(r.stdout, want) {
		t.Errorf("--prompt-file -cnv -no-cnv: %q, want %q", r.stdout, want)
	}
	// -sys and -st need a conversation, and say so (not "-s ys").
	checkOneLineError(t, runGGUF(t, nil, "run", model, "-sys", "be brief", "-p", "x"), exitUsage, "need --chat")
	checkOneLineError(t, runGGUF(t, nil, "run", model, "-st", "-p", "x"), exitUsage, "need --chat")
	// perplexity -m, as run -m; -ngl there too.
	eval := filepath.Join(t.TempDir(), "eval.txt")
	os.WriteFile(eval, bytes.Repeat([]byte("Once upon a time, there was a little girl named Lily. "), 20), 0o644)
	a := mustRun(t, nil, "perplexity", model, "-f", eval, "--ctx", "32", "--chunks", "2")
	b := mustRun(t, nil, "perplexity", "-m", model, "-f", eval, "--ctx", "32", "--chunks", "2", "-ngl", "0")
	if !bytes.Equal(a.stdout, b.stdout) || len(a.stdout) == 0 {
		t.Errorf("perplexity -m: %q, MODEL: %q", b.stdout, a.stdout)
	}
}

// TestRunChatLlamaCppFlags: -i is a conversation, -sys its system turn,
// -st answers one line of stdin, --ignore-eos generates past the
// end-of-turn token the forced fixture always picks.
func TestRunChatLlamaCppFlags(t *testing.T) {
	path, _ := chatFixture(t, true)
	r := mustRun(t, strings.NewReader("t1\nt2\n"), "run", path, "-i", "-sys", "t3", "-st", "-n", "4", "--temp", "0", "--verbose-prompt")
	if !strings.Contains(string(r.stderr), "1 turns") || len(verbosePrompts(t, r.stderr)) != 1 {
		t.Errorf("-i -sys -st over two lines: %s", r.stderr)
	}
	r = mustRun(t, nil, "run", path, "-p", "t1", "-n", "4", "--temp", "0")
	if !strings.Contains(string(r.stderr), "generated 0 tokens") {
		t.Errorf("the fixture does not stop at once: %s", r.stderr)
	}
	r = mustRun(t, nil, "run", path, "-p", "t1", "-n", "4", "--temp", "0", "--ignore-eos")
	if !strings.Contains(string(r.stderr), "generated 4 tokens") || !strings.Contains(string(r.stderr), "stopped: token limit") {
		t.Errorf("--ignore-eos: %s", r.stderr)
	}
}

// TestPromptFromStdin (issue 23 item 17): -f - reads stdin for run and
// perplexity, and a run without -p reads a piped stdin as its prompt.
func TestPromptFromStdin(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	gen := []string{"-n", "8", "--temp", "0", "--ctx", "64"}
	want := mustRun(t, nil, append([]string{"run", model, "-p", "Once upon a time"}, gen...)...).stdout
	for _, args := range [][]string{{"run", model, "-f", "-"}, {"run", model}} {
		r := mustRun(t, strings.NewReader("Once upon a time"), append(args, gen...)...)
		if !bytes.Equal(r.stdout, want) {
			t.Errorf("%v: %q, want %q", args[2:], r.stdout, want)
		}
	}
	checkOneLineError(t, runGGUF(t, nil, "run", model, "-p", "x", "-f", "-"), exitUsage, "not both")
	text := bytes.Repeat([]byte("Once upon a time, there was a little girl named Lily. "), 20)
	eval := filepath.Join(t.TempDir(), "eval.txt")
	os.WriteFile(eval, text, 0o644)
	a := mustRun(t, nil, "perplexity", model, "-f", eval, "--ctx", "32", "--chunks", "2")
	b := mustRun(t, bytes.NewReader(text), "perplexity", model, "-f", "-", "--ctx", "32", "--chunks", "2")
	if !bytes.Equal(a.stdout, b.stdout) || len(a.stdout) == 0 {
		t.Errorf("perplexity -f -: %q, -f FILE: %q", b.stdout, a.stdout)
	}
}
