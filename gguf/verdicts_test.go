package gguf_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
)

// stricterThanGGML lists the cases where ggml's gguf_init_from_file accepts a
// file that this package refuses, and why refusing is right: in each, what
// loads a model (llama.cpp's llama_model_loader, on top of gguf_init) refuses
// the file or cannot use it.
var stricterThanGGML = map[string]string{
	// ggml stores the byte as a C++ bool; gguf-py and this reader accept only 0 and 1.
	"malformed-bad-bool": "a bool byte other than 0 or 1",
	// llama_model_loader: "tensor 't' data is not within the file bounds".
	"malformed-data-outside-file": "tensor data past the end of the file",
	// llama_model_loader reads names as C strings: "tensor 'w' is duplicated";
	// a key with a NUL cannot be looked up by its full name.
	"malformed-nul-in-key":               "NUL in a key",
	"malformed-nul-keys-collide":         "NUL in a key",
	"malformed-nul-in-tensor-name":       "NUL in a tensor name",
	"malformed-nul-tensor-names-collide": "NUL in a tensor name",
}

type ggmlVerdict struct {
	ok            bool
	rewriteBytes  int
	rewriteSHA256 string
}

// readVerdicts reads testdata/ggml-verdicts.txt (made by
// bench/gguf-verdicts.sh with ggml 0.27.0).
func readVerdicts(t *testing.T) map[string]ggmlVerdict {
	t.Helper()
	f, err := os.Open("testdata/ggml-verdicts.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]ggmlVerdict{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		v := ggmlVerdict{ok: fs[1] == "ok"}
		if len(fs) == 4 {
			if v.rewriteBytes, err = strconv.Atoi(fs[2]); err != nil {
				t.Fatal(err)
			}
			v.rewriteSHA256 = fs[3]
		}
		out[fs[0]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGGMLVerdicts: on every generated case, both readers accept exactly
// what ggml's own loader accepts, but for the listed stricter cases.
func TestGGMLVerdicts(t *testing.T) {
	verdicts := readVerdicts(t)
	cases := fixture.VerdictCases()
	if len(verdicts) != len(cases) {
		t.Fatalf("%d verdicts recorded for %d cases: rerun bench/gguf-verdicts.sh --update", len(verdicts), len(cases))
	}
	for _, c := range cases {
		v, ok := verdicts[c.Name]
		if !ok {
			t.Errorf("%s: no ggml verdict recorded", c.Name)
			continue
		}
		_, err := gguf.NewReader(bytes.NewReader(c.Data), int64(len(c.Data)))
		_, serr := gguf.NewStreamReader(bytes.NewReader(c.Data))
		// A stream cannot see at the header that the file ends early.
		if (err == nil) != (serr == nil) && c.Name != "malformed-data-outside-file" {
			t.Errorf("%s: readers disagree: %v / %v", c.Name, err, serr)
		}
		if why, stricter := stricterThanGGML[c.Name]; stricter {
			if !v.ok || err == nil {
				t.Errorf("%s (%s): want ggml to accept and us to refuse; ggml ok=%v, ours err=%v", c.Name, why, v.ok, err)
			}
			continue
		}
		if v.ok != (err == nil) {
			t.Errorf("%s: ggml ok=%v, ours err=%v", c.Name, v.ok, err)
		}
	}
}

// rewrite writes f's header again as a rewrite that keeps the input's form
// does (plan.Identity: File.PadHeader when the input is padded).
func rewrite(t *testing.T, f *gguf.File) []byte {
	t.Helper()
	l, err := gguf.Layout(f.Version, f.Metadata, f.Tensors)
	if err != nil {
		t.Fatal(err)
	}
	if f.HeaderPadded() {
		l.PadHeader()
	}
	var out bytes.Buffer
	w, err := gguf.NewWriterLayout(&out, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestZeroTensorPadding: a file without tensors keeps its form. A padded
// one (as ggml writes it) is rewritten to exactly what ggml's writer makes
// of it; an unpadded one (gguf-py's) to itself. Both readers see the same
// data offset, the stream reader included.
func TestZeroTensorPadding(t *testing.T) {
	verdicts := readVerdicts(t)
	for _, c := range fixture.VerdictCases() {
		if !strings.HasPrefix(c.Name, "header-only") {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			r, err := gguf.NewReader(bytes.NewReader(c.Data), int64(len(c.Data)))
			if err != nil {
				t.Fatal(err)
			}
			sr, err := gguf.NewStreamReader(bytes.NewReader(c.Data))
			if err != nil {
				t.Fatal(err)
			}
			if sr.DataOffset != r.DataOffset || r.DataOffset != int64(len(c.Data)) {
				t.Fatalf("data offset %d (stream %d), file of %d bytes", r.DataOffset, sr.DataOffset, len(c.Data))
			}
			for _, f := range []*gguf.File{r.File, sr.File} {
				out := rewrite(t, f)
				if !bytes.Equal(out, c.Data) {
					t.Fatalf("rewrite of %d bytes is %d bytes", len(c.Data), len(out))
				}
			}
			v := verdicts[c.Name]
			if strings.HasSuffix(c.Name, "-padded") {
				sum := sha256.Sum256(c.Data)
				if len(c.Data) != v.rewriteBytes || hex.EncodeToString(sum[:]) != v.rewriteSHA256 {
					t.Fatalf("ggml's writer makes %d bytes %s of it, the fixture is %d bytes %x", v.rewriteBytes, v.rewriteSHA256, len(c.Data), sum)
				}
			}
		})
	}
}

// TestTruncatedPadding: a file without tensors whose padding is cut short
// (a partial copy of a ggml-written file) is read with the data section
// starting where the file ends, by both readers.
func TestTruncatedPadding(t *testing.T) {
	full := fixture.HeaderOnly(true, "general.name", "x")
	unpadded := fixture.HeaderOnly(false, "general.name", "x")
	if len(full) == len(unpadded) {
		t.Fatal("fixture needs padding")
	}
	for n := len(unpadded); n <= len(full); n++ {
		data := full[:n]
		r, err := gguf.NewReader(bytes.NewReader(data), int64(n))
		if err != nil {
			t.Fatal(err)
		}
		sr, err := gguf.NewStreamReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if r.DataOffset != int64(n) || sr.DataOffset != int64(n) {
			t.Fatalf("%d bytes: data offset %d, stream %d", n, r.DataOffset, sr.DataOffset)
		}
	}
}

// TestWriterRefusesBadNames: the writer never makes a file llama.cpp's
// loader refuses (an empty key, a NUL in a key or tensor name).
func TestWriterRefusesBadNames(t *testing.T) {
	for _, tc := range []struct {
		key, tensor, want string
	}{
		{"", "t", "key 0 is empty"},
		{"a\x00b", "t", "NUL byte at position 1"},
		{"k", "w\x00a", "tensor 0 name"},
	} {
		md := &gguf.Metadata{}
		md.Set(tc.key, gguf.Uint32(1))
		_, err := gguf.Layout(3, md, []gguf.TensorInfo{{Name: tc.tensor, Type: gguf.TypeF32, Dims: []uint64{8}}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("key %q tensor %q: err %v, want %q", tc.key, tc.tensor, err, tc.want)
		}
	}
}

// TestTooShortSaysItsSize: a file or stream of fewer than 4 bytes is
// reported with the bytes it has, a stream included (not "0 bytes").
func TestTooShortSaysItsSize(t *testing.T) {
	data := []byte("GGU")
	_, err := gguf.NewReader(bytes.NewReader(data), 3)
	_, serr := gguf.NewStreamReader(bytes.NewReader(data))
	for _, e := range []error{err, serr} {
		if e == nil || !strings.Contains(e.Error(), "(3 bytes)") {
			t.Errorf("err %v, want it to say (3 bytes)", e)
		}
	}
}

// TestStreamClaimsCostLittle: a tiny stream claiming 2^40 tensors and 2^40
// keys is refused having allocated little (the slices grow with the items
// that arrive; they used to be preallocated for 1 Mi items, ~100 MB a read,
// which stalled the fuzzer).
func TestStreamClaimsCostLittle(t *testing.T) {
	for _, claim := range []struct{ tensors, kvs uint64 }{{1 << 40, 0}, {0, 1 << 40}, {1 << 40, 1 << 40}} {
		data := []byte("GGUF\x03\x00\x00\x00")
		data = binary.LittleEndian.AppendUint64(data, claim.tensors)
		data = binary.LittleEndian.AppendUint64(data, claim.kvs)
		data = append(data, make([]byte, 16)...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := gguf.NewStreamReader(bytes.NewReader(data))
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatal("accepted")
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("claim %+v: %d bytes allocated to refuse a %d-byte stream", claim, got, len(data))
		}
	}
}
