package vocabselect

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestLlamaCppUnicodeDump compares vocabselect's code point tables and UTF-8
// decoder with dumps of the real llama.cpp's (bench/llama-unicode.sh makes
// them with bench/llama-unicode-dump.cpp and runs this test):
// LLAMACPP_UNICODE_TABLES names the "tables" dump, LLAMACPP_UNICODE_UTF8 the
// "utf8" one. Without them (no llama.cpp on the machine) it is skipped.
func TestLlamaCppUnicodeDump(t *testing.T) {
	tables, utf := os.Getenv("LLAMACPP_UNICODE_TABLES"), os.Getenv("LLAMACPP_UNICODE_UTF8")
	if tables == "" && utf == "" {
		t.Skip("no llama.cpp dumps: run bench/llama-unicode.sh")
	}
	if tables != "" {
		n := compareDump(t, tables, func(line string) string {
			var c rune
			if _, err := fmt.Sscanf(line, "%x ", &c); err != nil {
				t.Fatalf("%s: %q: %v", tables, line, err)
			}
			return fmt.Sprintf("%x %x %x %x", c, lowerCpt(c), nfdCpt(c), cptFlags(c)&0x1ff)
		})
		t.Logf("%d code points: lowercase, NFD and flags as llama.cpp's", n)
	}
	if utf != "" {
		n := compareDump(t, utf, func(line string) string {
			hex, _, _ := strings.Cut(line, ":")
			var s []byte
			if _, err := fmt.Sscanf(hex, "%x", &s); err != nil {
				t.Fatalf("%s: %q: %v", utf, line, err)
			}
			var b strings.Builder
			b.WriteString(hex + ":")
			for i := 0; i < len(s); {
				c, n := decodeCpt(string(s), i)
				fmt.Fprintf(&b, " %x", c)
				i += n
			}
			return b.String()
		})
		t.Logf("%d byte strings decoded as llama.cpp does", n)
	}
}

// compareDump checks that ours gives every line of the dump at path from
// the line itself, and returns the number of lines.
func compareDump(t *testing.T, path string, ours func(line string) string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n, bad := 0, 0
	for sc.Scan() {
		n++
		if got := ours(sc.Text()); got != sc.Text() {
			if bad++; bad <= 10 {
				t.Errorf("llama.cpp %q, ours %q", sc.Text(), got)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 || bad > 0 {
		t.Fatalf("%s: %d lines, %d differ", path, n, bad)
	}
	return n
}
