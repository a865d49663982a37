package engine

import (
	"encoding/binary"
	"os"
	"testing"
	"unsafe"

	"github.com/ggufkit/gguf/bench/crosscheck"
)

// TestPrunedHeadEmbeddingLazy checks that a pruned-head model touches only
// the embedding rows of the tokens it evaluates, not the whole table. The
// model is qwen3 (its tied head becomes a separate output.weight when
// pruned) with a 16384-row embedding of 1 KB rows (4096 pages); after two
// tokens at its two ends are evaluated, /proc/self/pagemap says which pages
// of the mapping this process has touched. The rows' pages must be; a
// fault maps at most the page cache folio around it (2 MiB at most, ext4's
// large folios) plus fault-around, so no page farther than 2 MiB from both
// rows may be: here the 3000 pages in the middle.
func TestPrunedHeadEmbeddingLazy(t *testing.T) {
	sh := crosscheck.Shapes["qwen3"]
	sh.Model.Vocab, sh.Model.Layers = 16384, 1
	var ranked []int32
	for id := int32(0); id < 200; id++ {
		ranked = append(ranked, id)
	}
	m := openModel(t, buildPruned(t, crosscheck.F32(sh), ranked, t.TempDir()))
	ids := []int32{1, 16000}
	sequenceLogits(t, newState(t, m, Options{Ctx: 64}), ids, len(ids))

	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no pagemap: %v", err)
	}
	defer pm.Close()
	page := uintptr(os.Getpagesize())
	emb := m.Embed.Data()
	first := uintptr(unsafe.Pointer(&emb[0])) / page
	last := (uintptr(unsafe.Pointer(&emb[0])) + uintptr(len(emb)) - 1) / page
	var rows []uintptr
	for _, id := range ids {
		rows = append(rows, uintptr(unsafe.Pointer(&m.Embed.Row(int(id))[0]))/page)
	}
	far := func(p uintptr) bool {
		for _, r := range rows {
			if max(p, r)-min(p, r) <= (2<<20)/page {
				return false
			}
		}
		return true
	}
	touched, farTouched, farPages := 0, 0, 0
	var e [8]byte
	for p := first; p <= last; p++ {
		if _, err := pm.ReadAt(e[:], int64(p*8)); err != nil {
			t.Skipf("pagemap: %v", err)
		}
		mapped := binary.LittleEndian.Uint64(e[:])>>63 == 1
		if mapped {
			touched++
		}
		if far(p) {
			farPages++
			if mapped {
				farTouched++
			}
		}
		for i, r := range rows {
			if p == r && !mapped {
				t.Errorf("the page of token %d's row is not mapped", ids[i])
			}
		}
	}
	t.Logf("token_embd: %d of %d pages touched after tokens %v; %d of the %d pages far from both rows",
		touched, last-first+1, ids, farTouched, farPages)
	if farTouched > 0 || farPages < 2000 {
		t.Errorf("%d of the %d embedding pages far from the evaluated rows are touched", farTouched, farPages)
	}
}
