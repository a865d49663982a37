package gguf_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/shared"
)

// realFiles returns every GGUF file of the reference data with the path of
// llama.cpp's dump of it ("" when there is none).
func realFiles(t testing.TB) map[string]string {
	files := map[string]string{}
	dumps := shared.Path(t, "refdata", "llama-cpp", "gguf-dumps")
	for _, p := range shared.Glob(t, "models/vocab/*.gguf") {
		files[p] = filepath.Join(dumps, "vocab", filepath.Base(p)+"-dump.txt")
	}
	files[shared.Path(t, "models", "stories260K-f32.gguf")] = filepath.Join(dumps, "stories260K-f32.gguf-dump.txt")
	files[shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf")] = filepath.Join(dumps, "stories260K-Q8_0.gguf-dump.txt")
	for _, p := range shared.Glob(t, "refdata/synthetic/models/*.gguf") {
		files[p] = shared.Path(t, "refdata", "synthetic", "gguf-dumps", strings.TrimSuffix(filepath.Base(p), ".gguf")+".gguf-dump.txt")
	}
	return files
}

func openFile(t testing.TB, path string) (*gguf.Reader, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r, data
}

// dumpString formats a string the way the reference dumper prints it.
func dumpString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

// dumpValue formats v as llama.cpp's dumper does: arrays cut to max
// elements followed by "... (N more)", f32 as %.9g.
func dumpValue(v gguf.Value, max int) string {
	if v.IsArray() {
		var parts []string
		n := v.Len()
		for i := 0; i < n && i < max; i++ {
			parts = append(parts, dumpValue(v.Index(i), max))
		}
		s := strings.Join(parts, " ")
		if n > max {
			s += fmt.Sprintf(" ... (%d more)", n-max)
		}
		return s
	}
	switch x := v.Interface().(type) {
	case string:
		return dumpString(x)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', 9, 32)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v.Interface())
}

// TestReadMatchesLlamaCpp compares our reading of every real file with
// llama.cpp's own (gguf_init_from_file) dump: header fields, every key with
// its type and value, every tensor's name, type, shape, offset and size.
func TestReadMatchesLlamaCpp(t *testing.T) {
	for path, dump := range realFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r, _ := openFile(t, path)
			want, err := os.ReadFile(dump)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(string(want), "\n"), "\n")
			// Arrays are printed whole in some dumps, cut to 16 in others.
			maxElems := 16
			for _, l := range lines {
				if strings.HasPrefix(l, "kv ") && strings.Contains(l, " arr[") && !strings.Contains(l, " more)") {
					maxElems = math.MaxInt
				}
			}
			got := []string{
				fmt.Sprintf("version: %d", r.Version),
				fmt.Sprintf("alignment: %d", r.Alignment),
				fmt.Sprintf("data_offset: %d", r.DataOffset),
				fmt.Sprintf("n_kv: %d", r.Metadata.Len()),
				fmt.Sprintf("n_tensors: %d", len(r.Tensors)),
			}
			for i, kv := range r.Metadata.KVs() {
				got = append(got, fmt.Sprintf("kv %d %s %s = %s", i, kv.Key, kv.Value.TypeString(), dumpValue(kv.Value, maxElems)))
			}
			for i, ti := range r.Tensors {
				ne := []string{"1", "1", "1", "1"}
				for j, d := range ti.Dims {
					ne[j] = fmt.Sprint(d)
				}
				tr, _ := ti.Type.Traits()
				got = append(got, fmt.Sprintf("tensor %d %s type=%s(%d) ne=[%s] offset=%d size=%d",
					i, ti.Name, tr.Name, uint32(ti.Type), strings.Join(ne, ","), ti.Offset, ti.Size()))
			}
			if len(got) != len(lines) {
				t.Fatalf("%d lines, llama.cpp's dump has %d", len(got), len(lines))
			}
			for i := range lines {
				if got[i] != lines[i] {
					j := 0
					for j < len(got[i]) && j < len(lines[i]) && got[i][j] == lines[i][j] {
						j++
					}
					lo := max(0, j-60)
					t.Errorf("line %d differs at byte %d:\n got  ...%.120s\n want ...%.120s", i, j, got[i][lo:], lines[i][lo:])
				}
			}
		})
	}
}

// writeIdentity rewrites a decoded file through the streaming writer.
func writeIdentity(t testing.TB, r *gguf.Reader, w io.Writer) {
	t.Helper()
	gw, err := gguf.NewWriter(w, r.Version, r.Metadata, r.Tensors)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Tensors {
		if _, err := io.Copy(gw, r.TensorData(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIdentityRoundTrip: every real file, decoded and written back through a
// pipe (the writer must not need to seek), is byte-identical.
func TestIdentityRoundTrip(t *testing.T) {
	for path := range realFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r, data := openFile(t, path)
			pr, pw := io.Pipe()
			go func() {
				writeIdentity(t, r, pw)
				pw.Close()
			}()
			out, err := io.ReadAll(pr)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, data) {
				t.Fatalf("rewrite differs: %d bytes vs %d", len(out), len(data))
			}
		})
	}
}

// TestStreamReaderMatches: reading front to back from a plain io.Reader
// gives the same header and tensor bytes as random access.
func TestStreamReaderMatches(t *testing.T) {
	files := []string{shared.Path(t, "models", "stories260K-f32.gguf"), shared.Path(t, "refdata", "llama-cpp", "stories260K-Q8_0.gguf")}
	for _, path := range files {
		r, data := openFile(t, path)
		sr, err := gguf.NewStreamReader(iotestOneByte(bytes.NewReader(data)))
		if err != nil {
			t.Fatal(err)
		}
		if sr.DataOffset != r.DataOffset || len(sr.Tensors) != len(r.Tensors) || sr.Metadata.Len() != r.Metadata.Len() {
			t.Fatalf("stream header differs")
		}
		for {
			i, tr, err := sr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := io.ReadAll(r.TensorData(i))
			if !bytes.Equal(got, want) {
				t.Fatalf("tensor %s differs", r.Tensors[i].Name)
			}
		}
	}
}

// iotestOneByte returns a reader that returns at most 7 bytes per Read, to
// exercise buffer refills at every boundary.
func iotestOneByte(r io.Reader) io.Reader { return &smallReader{r} }

type smallReader struct{ r io.Reader }

func (s *smallReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 7)]) }

// TestMalformed: each invalid file fails with a FormatError that names the
// problem, from both readers, allocating little however large its claims.
func TestMalformed(t *testing.T) {
	for _, m := range fixture.MalformedFiles() {
		t.Run(m.Name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := gguf.NewReader(bytes.NewReader(m.Data), int64(len(m.Data)))
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), m.Error) {
				t.Errorf("error %q does not mention %q", err, m.Error)
			}
			var fe *gguf.FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a FormatError", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
				t.Errorf("allocated %d bytes for a %d-byte file", alloc, len(m.Data))
			}
			if _, err := gguf.NewStreamReader(bytes.NewReader(m.Data)); err == nil {
				// A stream cannot know the file size, so data placement is
				// the one rule it cannot check from the header alone.
				if m.Name != "data-outside-file" {
					t.Errorf("stream reader accepted")
				}
			}
		})
	}
}

// TestSentinels: conditions callers branch on are testable with errors.Is.
func TestSentinels(t *testing.T) {
	want := map[string]error{"lfs-pointer": gguf.ErrLFSPointer, "big-endian": gguf.ErrBigEndian,
		"version-1": gguf.ErrUnsupportedVersion, "bad-magic": gguf.ErrNotGGUF, "truncated-header": gguf.ErrTruncated}
	for _, m := range fixture.MalformedFiles() {
		if w, ok := want[m.Name]; ok {
			_, err := gguf.NewReader(bytes.NewReader(m.Data), int64(len(m.Data)))
			if !errors.Is(err, w) {
				t.Errorf("%s: %v is not %v", m.Name, err, w)
			}
		}
	}
}

// TestTruncatedAndFlipped cuts a real file at many offsets and flips bits
// in its header: every result is a clean error or a valid file, never a
// panic; truncations inside the header or data always fail.
func TestTruncatedAndFlipped(t *testing.T) {
	r, data := openFile(t, shared.Path(t, "models", "stories260K-f32.gguf"))
	hdr := int(r.HeaderSize)
	for cut := 0; cut < len(data); cut += 1 + cut/50 {
		_, err := gguf.NewReader(bytes.NewReader(data[:cut]), int64(cut))
		if err == nil {
			t.Fatalf("truncated at %d of %d: accepted", cut, len(data))
		}
		var fe *gguf.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("truncated at %d: %T %v", cut, err, err)
		}
	}
	buf := make([]byte, len(data))
	rng := fixture.SplitMix64(7)
	for range 3000 {
		copy(buf, data)
		pos := int(rng.Next() % uint64(hdr))
		buf[pos] ^= 1 << (rng.Next() % 8)
		f, err := gguf.NewReader(bytes.NewReader(buf), int64(len(buf)))
		if err == nil {
			// A flip in a string or float can leave a valid file: it must
			// then describe bytes that exist.
			for i := range f.Tensors {
				if f.TensorFileOffset(i)+f.Tensors[i].Size() > int64(len(buf)) {
					t.Fatalf("flip at %d: accepted a tensor outside the file", pos)
				}
			}
		}
	}
}

// TestValuesRoundTrip writes all 13 value types, nested arrays and edge
// values (NaN payloads, -0, extremes) and reads them back bit for bit.
func TestValuesRoundTrip(t *testing.T) {
	nan := math.Float32frombits(0x7fc00123)
	inner1 := gguf.MustArray([]string{"a", "", "ü"})
	inner2 := gguf.MustArray([]int16{-1, 2})
	kvs := []gguf.KV{
		{"u8", gguf.Uint8(255)}, {"i8", gguf.Int8(-128)}, {"u16", gguf.Uint16(65535)}, {"i16", gguf.Int16(-32768)},
		{"u32", gguf.Uint32(math.MaxUint32)}, {"i32", gguf.Int32(math.MinInt32)}, {"f32", gguf.Float32(nan)},
		{"negzero", gguf.Float32(float32(math.Copysign(0, -1)))}, {"bool", gguf.Bool(true)},
		{"str", gguf.String("héllo\x00world")}, {"u64", gguf.Uint64(math.MaxUint64)}, {"i64", gguf.Int64(math.MinInt64)},
		{"f64", gguf.Float64(math.Inf(-1))},
		{"a.u8", gguf.MustArray([]uint8{0, 1, 255})}, {"a.i8", gguf.MustArray([]int8{-1})},
		{"a.u16", gguf.MustArray([]uint16{7})}, {"a.i16", gguf.MustArray([]int16{-7})},
		{"a.u32", gguf.MustArray([]uint32{})}, {"a.i32", gguf.MustArray([]int32{1, -1})},
		{"a.f32", gguf.MustArray([]float32{nan, 1.5})}, {"a.bool", gguf.MustArray([]bool{true, false})},
		{"a.str", gguf.MustArray([]string{"x", ""})}, {"a.u64", gguf.MustArray([]uint64{1 << 63})},
		{"a.i64", gguf.MustArray([]int64{-1 << 63})}, {"a.f64", gguf.MustArray([]float64{math.Pi})},
		{"a.nested", gguf.MustArray([]gguf.Value{inner1, inner2})},
	}
	md, err := gguf.NewMetadata(kvs...)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := gguf.NewWriter(&buf, 3, md, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := gguf.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for i, kv := range r.Metadata.KVs() {
		if kv.Key != kvs[i].Key || !kv.Value.Equal(kvs[i].Value) || kv.Value.TypeString() != kvs[i].Value.TypeString() {
			t.Errorf("key %d: got %s %s %s, want %s %s %s", i, kv.Key, kv.Value.TypeString(), kv.Value.Format(-1),
				kvs[i].Key, kvs[i].Value.TypeString(), kvs[i].Value.Format(-1))
		}
	}
	// Writing the decoded file again gives the same bytes.
	var again bytes.Buffer
	writeIdentity(t, r, &again)
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatal("second rewrite differs")
	}
}

// TestWriterRefusesWrongSizes: too much data, too little, and invalid
// tensor tables are errors.
func TestWriterRefusesWrongSizes(t *testing.T) {
	m := fixture.Dense()
	ts := m.Tensors()
	infos := make([]gguf.TensorInfo, len(ts))
	var total int
	for i := range ts {
		infos[i] = ts[i].Info
		total += len(ts[i].Data)
	}
	w, err := gguf.NewWriter(io.Discard, 3, m.Metadata(), infos)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range ts {
		w.Write(tt.Data)
	}
	if _, err := w.Write([]byte{1}); !errors.Is(err, gguf.ErrTooMuchData) {
		t.Errorf("extra byte: %v", err)
	}
	w, _ = gguf.NewWriter(io.Discard, 3, m.Metadata(), infos)
	w.Write(ts[0].Data[:10])
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "token_embd.weight") {
		t.Errorf("short data: %v", err)
	}
	bad := append([]gguf.TensorInfo(nil), infos...)
	bad[1].Name = bad[0].Name
	if _, err := gguf.NewWriter(io.Discard, 3, m.Metadata(), bad); err == nil {
		t.Error("duplicate names accepted")
	}
	bad = []gguf.TensorInfo{{Name: "q", Type: gguf.TypeQ8_0, Dims: []uint64{48}}}
	if _, err := gguf.NewWriter(io.Discard, 3, m.Metadata(), bad); err == nil {
		t.Error("ne0 not a multiple of the block size accepted")
	}
}

// TestLayoutAlignment: offsets follow general.alignment and the padding is
// zeros, as llama.cpp requires.
func TestLayoutAlignment(t *testing.T) {
	m := fixture.MoE()
	m.Alignment = 64
	data := m.Build()
	r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Alignment != 64 || r.DataOffset%64 != 0 {
		t.Fatalf("alignment %d, data offset %d", r.Alignment, r.DataOffset)
	}
	for i, ti := range r.Tensors {
		if ti.Offset%64 != 0 {
			t.Errorf("tensor %d offset %d", i, ti.Offset)
		}
	}
	for _, b := range data[r.HeaderSize:r.DataOffset] {
		if b != 0 {
			t.Fatal("header padding is not zero")
		}
	}
}

// TestTypeTableMatchesGGML checks the type table against ggml's own, as
// listed in refdata/ggml-types.txt, for every id 0..42.
func TestTypeTableMatchesGGML(t *testing.T) {
	f, err := os.Open(shared.Path(t, "refdata", "ggml-types.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	seen := 0
	for sc.Scan() {
		if sc.Text() == "" && seen > 0 {
			break // end of the type table
		}
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 {
			continue
		}
		id, err := strconv.Atoi(fs[0])
		if err != nil || id > 42 {
			continue
		}
		typ := gguf.Type(id)
		if fs[1] == "DEPRECATED" || strings.HasPrefix(fs[1], "TYPE_") {
			if typ.Valid() {
				t.Errorf("id %d is removed in ggml but valid here", id)
			}
			seen++
			continue
		}
		tr, err := typ.Traits()
		if err != nil {
			t.Errorf("id %d (%s): %v", id, fs[1], err)
			continue
		}
		if tr.Name != fs[1] || fmt.Sprint(tr.BlockSize) != fs[2] || fmt.Sprint(tr.TypeSize) != fs[3] {
			t.Errorf("id %d: have %s %d %d, ggml %s %s %s", id, tr.Name, tr.BlockSize, tr.TypeSize, fs[1], fs[2], fs[3])
		}
		if p, err := gguf.ParseType(strings.ToUpper(fs[1])); err != nil || p != typ {
			t.Errorf("ParseType(%s) = %v, %v", fs[1], p, err)
		}
		seen++
	}
	if seen != 43 {
		t.Fatalf("checked %d ids, want 43", seen)
	}
	if _, err := gguf.Type(43).Traits(); err == nil || !strings.Contains(err.Error(), "43") {
		t.Errorf("unknown id: %v", err)
	}
}
