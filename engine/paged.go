package engine

import (
	"fmt"

	"github.com/dustin/go-humanize"
	"io"
	"os"

	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/osmem"
)

// expertSource is where a paged expert tensor's bytes are: expert e of it
// is bytes [off + e*size/n, off + (e+1)*size/n) of f.
type expertSource struct {
	f    io.ReaderAt
	path string // of f, for PagerOptions.Direct
	off  int64
	size int64
}

// residentPart returns how much of the file at path is loaded: all of it,
// or for a paged model the part before its first expert tensor, which
// must then be the file's last tensors (gguf build --experts-last).
func (m *Model) residentPart(path string, r *gguf.Reader) (int64, error) {
	if !m.opts.PageExperts {
		return r.Size(), nil
	}
	info := experts.Describe(r.File)
	if info == nil {
		return r.Size(), nil // a split without experts
	}
	if !info.Last {
		return 0, fmt.Errorf("%s: its experts are not the last tensors of the file, so they cannot be paged (rewrite it with gguf build --experts-last)", path)
	}
	if m.paged == nil {
		m.paged = map[string]expertSource{}
	}
	return info.NonExpertEnd, nil
}

// load maps (or with NoMmap reads) the first n bytes of f, locked in RAM
// with Mlock.
func (m *Model) load(f *os.File, n int64) ([]byte, error) {
	var data []byte
	var unmap func() error
	var err error
	mapped := false
	if m.opts.NoMmap {
		data, unmap, err = osmem.ReadAll(f, n)
	} else {
		data, unmap, mapped, err = osmem.Map(f, n)
	}
	if err != nil {
		return nil, err
	}
	m.unmap = append(m.unmap, unmap)
	if mapped {
		m.maps = append(m.maps, data)
	}
	if m.opts.Mlock {
		if err := osmem.Lock(data); err != nil {
			return nil, fmt.Errorf("--mlock of %d bytes: %w (raise the locked-memory limit, ulimit -l)", len(data), err)
		}
	}
	return data, nil
}

// pagedSource returns where the paged expert tensor t ([off, end) of f)
// is read from: f, or the --experts-from cache where the file's bytes of
// it are punched out.
func (m *Model) pagedSource(f *os.File, cache *cacheFile, t *gguf.TensorInfo, off, end int64) (expertSource, error) {
	src := expertSource{f: f, path: f.Name(), off: off, size: end - off}
	if cache == nil {
		return src, nil
	}
	holes, err := experts.HoleBytes(f, off, end)
	if err != nil {
		return src, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if holes == 0 {
		return src, nil
	}
	if src.off, err = cache.locate(t); err != nil {
		return src, fmt.Errorf("--experts-from %s: %w", m.opts.ExpertsFrom, err)
	}
	src.f, src.path = cache.f, cache.f.Name()
	m.FromCache++
	return src, nil
}

// Paged reports whether the model's experts are paged (OpenOptions.PageExperts).
func (m *Model) Paged() bool { return m.paged != nil }

// PagerOptions configure the expert pager of a State of a paged model.
type PagerOptions struct {
	// Pool is the slots per MoE layer; each holds one expert's gate, up
	// and down matrices. Budget, when Pool is 0, is the bytes all pools
	// may take together, divided evenly among the layers.
	Pool   int
	Budget int64
	// Policy chooses the expert a full pool gives up (LRU or LFU).
	Policy pager.Policy
	// Bias is added, for selection only, to the router scores of the
	// experts in the layer's pool (cache-aware routing); the mixing
	// weights stay the model's. 0 leaves routing exactly as unpaged.
	Bias float32
	// Prefetch, when > 0, applies the next MoE layer's router to each
	// layer's FFN input while decoding one token at a time and queues the
	// Prefetch best experts it predicts (into free or evictable slots only).
	Prefetch int
	// Stage, when > 0 (and Prefetch is 0), is the same prediction of the
	// Stage best experts read into Stage slots outside the pools: a
	// speculative read that evicts nothing. A predicted expert the next
	// layer misses is taken from its staging slot (the slot's buffers
	// and the pool slot's are swapped); one it does not use is
	// overwritten by the next layer's. The pools place exactly what they
	// place without it, so hits and misses are unchanged; only the
	// misses' reads may have started early, in idle reader time.
	Stage int
	// Readers is the number of reader goroutines (default 4, as the
	// seeds found 4 readers saturate a device's flash).
	Readers int
	// Flash, when not nil, throttles the readers to a simulated device.
	Flash *pager.Flash
	// Direct reads experts without the page cache (pager.DirectSource):
	// on a device short of RAM, cached expert pages would push out the
	// mapped non-expert weights.
	Direct bool
}

// statePager is a State's expert pager: per MoE layer a pool (which
// expert is in which slot, package pager) and each slot's gate, up and
// down buffers with a matrix over each.
type statePager struct {
	o         PagerOptions
	slots     int
	loader    *pager.Loader
	layers    []*pagedLayer // per model layer, nil for a dense layer
	direct    map[string]*pager.DirectSource
	bytes     int64 // of all slots
	placed    []pager.Placement
	pending   []pager.Placement // of a group, not yet computed
	prePlaced []pager.Placement
	// preRouting is the family's routing without TopP: a prediction
	// takes the best Prefetch experts.
	preRouting Routing
	bonus      []float32
	pre        *routeScratch
	preLog     []float32
	preSel     []int
	preW       []float32
	step       int64 // forward passes so far
	// stage is the staging slots of PagerOptions.Stage.
	stage []stageSlot
	// staged and stagedUsed count the experts read into staging slots
	// and those a layer then took.
	staged, stagedUsed int64
	// scratch is Matrix.PackSlot's (matrix runs on one thread at a time:
	// the serial path's, or under expertTask.mu).
	scratch []byte
}

// stageSlot is one staging slot: an expert's gate, up and down buffers
// and which expert of which layer they are being read for, in which pass.
type stageSlot struct {
	buf    [3]*pager.Buffer
	layer  int
	expert int
	step   int64
	live   bool
}

type pagedLayer struct {
	pool *pager.Pool
	src  [3]expertSource // gate, up, down tensors
	each [3]int64        // bytes per expert of each
	buf  [][3]*pager.Buffer
	mat  [][3]Matrix // matrices over the slots' buffers
	// pack is each matrix's size in the group layout, 0 where the slots
	// keep the row layout (Matrix.SlotPackBytes); packed[s][i] is the
	// load (pager.Loader.Gen) slot s's i-th matrix was packed from.
	pack   [3]int
	packed [][3]uint64
	tmpl   [3]Matrix // the matrices before packing
}

// newStatePager allocates the pools of a paged model: every slot up front,
// so decoding allocates nothing and the resident memory is fixed.
func newStatePager(m *Model, c *Config, o *PagerOptions) (*statePager, error) {
	if o == nil {
		return nil, fmt.Errorf("the model's experts are paged: give the State a pager (a pool size or budget)")
	}
	p := &statePager{o: *o}
	perExpert := m.ExpertSlotBytes() // all MoE layers' bytes of one expert each
	moeLayers := 0
	for l := range m.Layers {
		if c.moeLayer(l) {
			moeLayers++
		}
	}
	if moeLayers == 0 {
		return nil, fmt.Errorf("the model has no MoE layers to page")
	}
	switch {
	case o.Pool > 0:
		p.slots = o.Pool
	case o.Budget > 0:
		p.slots = int(o.Budget / perExpert)
	default:
		return nil, fmt.Errorf("the expert pager needs a pool size or a byte budget")
	}
	p.slots = min(p.slots, c.Experts)
	if p.slots < c.ExpertsUsed {
		return nil, fmt.Errorf("a pool of %d slots per layer is smaller than one token's working set (%d experts used per token; %d MoE layers, %s per expert): give at least --moe-pool %d or --moe-budget %s",
			p.slots, c.ExpertsUsed, moeLayers, humanize.IBytes(uint64(perExpert/int64(moeLayers))), c.ExpertsUsed,
			budgetArg(perExpert*int64(c.ExpertsUsed)))
	}
	if o.Policy.Kind == pager.Belady {
		return nil, fmt.Errorf("the belady policy needs the future: it is for gguf moe simulate only")
	}
	p.layers = make([]*pagedLayer, len(m.Layers))
	for l := range m.Layers {
		if !c.moeLayer(l) {
			continue
		}
		L := &m.Layers[l]
		pool, err := pager.NewPool(c.Experts, p.slots, o.Policy)
		if err != nil {
			return nil, err
		}
		pl := &pagedLayer{pool: pool, buf: make([][3]*pager.Buffer, p.slots), mat: make([][3]Matrix, p.slots), packed: make([][3]uint64, p.slots)}
		for i, ms := range [][]*Matrix{L.GateExps, L.UpExps, L.DownExps} {
			src, ok := m.paged[ms[0].Name]
			if !ok {
				return nil, fmt.Errorf("tensor %q is not paged", ms[0].Name)
			}
			if o.Direct {
				if src.f, err = p.openDirect(src.path); err != nil {
					p.close()
					return nil, err
				}
			}
			pl.src[i] = src
			pl.each[i] = int64(ms[0].Rows * ms[0].RowBytes)
			if pl.each[i]*int64(c.Experts) != src.size {
				return nil, fmt.Errorf("tensor %q holds %d bytes, not %d experts of %d", ms[0].Name, src.size, c.Experts, pl.each[i])
			}
			pl.pack[i], pl.tmpl[i] = m.slotPackBytes(ms[0]), *ms[0]
			for s := range pl.buf {
				pl.buf[s][i] = pager.NewBuffer(pl.slotBytes(i), o.Direct)
				pl.mat[s][i] = *ms[0]
				p.bytes += int64(pl.slotBytes(i))
			}
		}
		p.layers[l] = pl
	}
	p.bonus = make([]float32, c.Experts)
	p.placed = make([]pager.Placement, 0, p.slots)
	p.pending = make([]pager.Placement, 0, p.slots)
	if o.Prefetch > 0 && o.Stage > 0 {
		return nil, fmt.Errorf("prefetch into the pools and into staging slots are exclusive: give one")
	}
	if o.Prefetch > 0 || o.Stage > 0 {
		p.pre = newRouteScratch(c.Experts, max(c.Routing.Groups, 1))
		p.preLog = make([]float32, c.Experts)
		n := min(o.Prefetch+o.Stage, c.Experts)
		p.preSel, p.preW, p.prePlaced = make([]int, n), make([]float32, n), make([]pager.Placement, 0, n)
		p.preRouting = c.Routing
		p.preRouting.TopP = 0
	}
	if o.Stage > 0 {
		p.newStage(m, min(o.Stage, c.Experts))
	}
	readers := o.Readers
	if readers <= 0 {
		readers = 4
	}
	p.loader = pager.NewLoader(readers, o.Flash)
	return p, nil
}

func (p *statePager) close() {
	if p == nil {
		return
	}
	if p.loader != nil {
		p.loader.Close()
	}
	for _, d := range p.direct {
		d.Close()
	}
}

// openDirect opens path for direct reads, once per file.
func (p *statePager) openDirect(path string) (*pager.DirectSource, error) {
	if d, ok := p.direct[path]; ok {
		return d, nil
	}
	d, err := pager.OpenDirect(path)
	if err != nil {
		return nil, fmt.Errorf("--moe-direct: %w", err)
	}
	if p.direct == nil {
		p.direct = map[string]*pager.DirectSource{}
	}
	p.direct[path] = d
	return d, nil
}

// prio is the readers' priority of layer l's reads in the current pass.
func (p *statePager) prio(l int) int64 { return p.step*int64(len(p.layers)) + int64(l) }

// bonusFor fills the cache-aware routing bonus of layer l (nil without a
// bias).
func (p *statePager) bonusFor(l int) []float32 {
	if p == nil || p.o.Bias == 0 {
		return nil
	}
	pool := p.layers[l].pool
	for e := range p.bonus {
		p.bonus[e] = 0
		if pool.Resident(e) {
			p.bonus[e] = p.o.Bias
		}
	}
	return p.bonus
}

// stagePart is the bytes of the largest gate, up and down of one expert
// over the model's MoE layers, as a pool slot holds them (packed in place
// where slots are: Model.slotPackBytes): a staging slot's parts, which any
// layer's expert fits, and which swap with a pool slot's buffers.
func (m *Model) stagePart() [3]int64 {
	var each [3]int64
	for l := range m.Layers {
		if m.Config.moeLayer(l) {
			L := &m.Layers[l]
			for i, ms := range [][]*Matrix{L.GateExps, L.UpExps, L.DownExps} {
				each[i] = max(each[i], int64(ms[0].Rows*ms[0].RowBytes), int64(m.slotPackBytes(ms[0])))
			}
		}
	}
	return each
}

// StageBytes is what n staging slots (PagerOptions.Stage) cost a State.
func (m *Model) StageBytes(n int) int64 {
	each := m.stagePart()
	return int64(n) * (each[0] + each[1] + each[2])
}

// newStage allocates n staging slots (Model.stagePart).
func (p *statePager) newStage(m *Model, n int) {
	each := m.stagePart()
	p.stage = make([]stageSlot, n)
	for k := range p.stage {
		for i := range 3 {
			p.stage[k].buf[i] = pager.NewBuffer(int(each[i]), p.o.Direct)
			p.bytes += each[i]
		}
	}
}

// stageLoad queues the reads of the predicted experts sel of layer l that
// its pool does not hold into the staging slots, as prefetches (idle
// reader time, dropped unread once the pass is past l). Whatever the
// slots held for the previous layer is overwritten: that layer is done.
func (p *statePager) stageLoad(l int, sel []int) error {
	pl := p.layers[l]
	k := 0
	for _, e := range sel {
		if k == len(p.stage) {
			break
		}
		if pl.pool.Resident(e) {
			continue
		}
		st := &p.stage[k]
		if st.buf[0].Bytes() < int(pl.each[0]) || st.buf[1].Bytes() < int(pl.each[1]) || st.buf[2].Bytes() < int(pl.each[2]) {
			// a smaller layer's buffers, swapped in: leave it empty
			st.live = false
			k++
			continue
		}
		for i := range 3 {
			src := pl.src[i]
			if err := p.loader.Load(st.buf[i], src.f, src.off+int64(e)*pl.each[i], int(pl.each[i]), p.prio(l), true); err != nil {
				return err
			}
		}
		st.layer, st.expert, st.step, st.live = l, e, p.step, true
		p.staged++
		k++
	}
	for ; k < len(p.stage); k++ {
		p.stage[k].live = false
	}
	return nil
}

// takeStaged moves a staged read of expert e of layer l, if this pass
// has one, into slot s of the layer's pool (the buffers are swapped: the
// slot's old ones, whose expert was just evicted, become the staging
// slot's) and makes its reads still queued demand reads.
func (p *statePager) takeStaged(l, e, s int) bool {
	for k := range p.stage {
		st := &p.stage[k]
		if !st.live || st.layer != l || st.expert != e || st.step != p.step {
			continue
		}
		pl := p.layers[l]
		pl.buf[s], st.buf = st.buf, pl.buf[s]
		st.live = false
		for _, b := range pl.buf[s] {
			p.loader.Promote(b)
		}
		p.stagedUsed++
		return true
	}
	return false
}

// load queues the reads of the placements' misses in layer l and, for
// the forward pass (not a prefetch), makes the reads of its prefetched
// hits still queued demand reads; a miss staged for this layer is taken
// from its staging slot instead of read again.
func (p *statePager) load(l int, g []pager.Placement, prefetch bool) error {
	pl := p.layers[l]
	for _, x := range g {
		if x.Hit {
			if x.Prefetched && !prefetch {
				for _, b := range pl.buf[x.Slot] {
					p.loader.Promote(b)
				}
			}
			continue
		}
		if !prefetch && p.takeStaged(l, x.Expert, x.Slot) {
			continue
		}
		for i := range 3 {
			src := pl.src[i]
			if err := p.loader.Load(pl.buf[x.Slot][i], src.f, src.off+int64(x.Expert)*pl.each[i], int(pl.each[i]), p.prio(l), prefetch); err != nil {
				return err
			}
		}
	}
	if !prefetch {
		p.cancelStaged(l)
	}
	return nil
}

// cancelStaged drops the staged reads of layer l that it did not take
// and that have not started: the device is the bottleneck, and they
// would delay the reads the next layers wait for.
func (p *statePager) cancelStaged(l int) {
	for k := range p.stage {
		st := &p.stage[k]
		if st.live && st.layer == l && st.step == p.step {
			for _, b := range st.buf {
				p.loader.Cancel(b)
			}
			st.live = false
		}
	}
}

// firstReady returns the index in pending of the first expert of layer l
// whose gate, up and down are all read, or 0 (the first queued, which the
// readers take first) when none is yet.
func (p *statePager) firstReady(l int, pending []pager.Placement) int {
	pl := p.layers[l]
	for i, x := range pending {
		b := &pl.buf[x.Slot]
		if p.loader.Ready(b[0]) && p.loader.Ready(b[1]) && p.loader.Ready(b[2]) {
			return i
		}
	}
	return 0
}

// matrices waits for the part-th matrix of slot s in layer l.
func (p *statePager) matrix(l, s, part int) (*Matrix, error) {
	pl := p.layers[l]
	b, err := p.loader.Wait(pl.buf[s][part])
	if err != nil {
		return nil, err
	}
	m := &pl.mat[s][part]
	if n := pl.pack[part]; n > 0 {
		// The slot holds the rows as read; they are put in the group
		// layout once per read, in place (the buffer has room for it),
		// so that a paged expert runs the kernels, and gives the bits,
		// of a resident one (Model.packMatrices). A kernel set changed
		// since the pools were made (another layout size) leaves them
		// in rows.
		b = b[:max(len(b), n)]
		if gen := p.loader.Gen(pl.buf[s][part]); pl.packed[s][part] != gen {
			*m = pl.tmpl[part]
			m.SetData(b)
			if m.SlotPackBytes() == n {
				p.scratch = m.PackSlot(p.scratch)
			}
			pl.packed[s][part] = gen
		}
	}
	m.SetData(b)
	return m, nil
}

// slotBytes is the size of a slot's buffer for the i-th matrix: its rows,
// or its group layout when that is larger (Q4_K's).
func (pl *pagedLayer) slotBytes(i int) int { return max(int(pl.each[i]), pl.pack[i]) }

// PagerStats is what a State's expert pager did.
type PagerStats struct {
	Slots     int   // per MoE layer
	PoolBytes int64 // all slots, staging slots included
	// Staged is the experts read into staging slots (PagerOptions.Stage),
	// StagedUsed those a layer took.
	Staged, StagedUsed int64
	pager.Stats
	pager.LoadStats
}

// PagerStats returns the pager's counts, or nil for a State without one.
func (s *State) PagerStats() *PagerStats {
	p := s.pg
	if p == nil {
		return nil
	}
	st := &PagerStats{Slots: p.slots, PoolBytes: p.bytes, Staged: p.staged, StagedUsed: p.stagedUsed, LoadStats: p.loader.Stats()}
	for _, pl := range p.layers {
		if pl != nil {
			st.Stats.Add(pl.pool.Stats())
		}
	}
	return st
}

// ExpertSlotBytes is what one pool slot per MoE layer costs: one expert's
// gate, up and down matrices in every MoE layer, each in the group layout
// its slots are packed into where that is larger than its rows (Q4_K's),
// or 0 for a model without experts. A State's pools take Slots times this.
func (m *Model) ExpertSlotBytes() int64 {
	var n int64
	for l := range m.Layers {
		if m.Config.moeLayer(l) {
			L := &m.Layers[l]
			for _, ms := range [][]*Matrix{L.GateExps, L.UpExps, L.DownExps} {
				n += int64(max(ms[0].Rows*ms[0].RowBytes, m.slotPackBytes(ms[0])))
			}
		}
	}
	return n
}

// slotPackBytes is the size of expert matrix w in a slot packed as it is
// read (Matrix.SlotPackBytes), or 0 when slots keep w's rows.
func (m *Model) slotPackBytes(w *Matrix) int {
	if m.opts.NoRepack {
		return 0
	}
	return w.SlotPackBytes()
}

// ShrinkPager cuts the State's expert pools to slots per layer, never
// below one token's working set (experts used per token), keeping the
// experts each pool's policy values most, and returns the slots per
// layer it now has. The dropped slots' buffers are left to the garbage
// collector (memguard.Release hands them back to the kernel). It is for
// a caller short of memory, between evaluations: never during one.
func (s *State) ShrinkPager(slots int) int {
	p := s.pg
	if p == nil {
		return 0
	}
	slots = max(slots, s.c.ExpertsUsed, 1)
	if slots >= p.slots {
		return p.slots
	}
	p.bytes = 0
	for _, st := range p.stage {
		for _, b := range st.buf {
			p.bytes += int64(b.Bytes())
		}
	}
	for _, pl := range p.layers {
		if pl == nil {
			continue
		}
		keep := pl.pool.Shrink(slots)
		buf, mat, packed := make([][3]*pager.Buffer, len(keep)), make([][3]Matrix, len(keep)), make([][3]uint64, len(keep))
		for i, old := range keep {
			buf[i], mat[i], packed[i] = pl.buf[old], pl.mat[old], pl.packed[old]
			for part := range 3 {
				p.bytes += int64(pl.slotBytes(part))
			}
		}
		pl.buf, pl.mat, pl.packed = buf, mat, packed
	}
	p.slots = slots
	return slots
}

// GrowPager adds slots to the State's expert pools, up to slots per
// layer (at most the layer's experts), when memory is back after
// ShrinkPager, and returns the slots per layer it now has. The new
// slots' buffers are allocated now, so evaluating still allocates
// nothing; they fill as experts miss. Like ShrinkPager it is for
// between evaluations, never during one.
func (s *State) GrowPager(slots int) int {
	p := s.pg
	if p == nil {
		return 0
	}
	slots = min(slots, s.c.Experts)
	if slots <= p.slots {
		return p.slots
	}
	L := s.m.Layers
	for l, pl := range p.layers {
		if pl == nil {
			continue
		}
		pl.pool.Grow(slots)
		for range slots - len(pl.buf) {
			var b [3]*pager.Buffer
			var m [3]Matrix
			for i, ms := range [][]*Matrix{L[l].GateExps, L[l].UpExps, L[l].DownExps} {
				b[i] = pager.NewBuffer(pl.slotBytes(i), p.o.Direct)
				m[i] = *ms[0]
				p.bytes += int64(pl.slotBytes(i))
			}
			pl.buf, pl.mat, pl.packed = append(pl.buf, b), append(pl.mat, m), append(pl.packed, [3]uint64{})
		}
	}
	p.slots = slots
	return slots
}

// override applies the routing options to the file's configuration.
func (o *OpenOptions) override(c *Config) error {
	if o.ExpertsUsed > 0 {
		if c.Experts == 0 {
			return fmt.Errorf("--experts %d: the model has no experts", o.ExpertsUsed)
		}
		if o.ExpertsUsed > c.Experts {
			return fmt.Errorf("--experts %d: the model has %d experts per layer", o.ExpertsUsed, c.Experts)
		}
		c.ExpertsUsed = o.ExpertsUsed
		if err := c.Routing.check(c.Arch, c.Experts, c.ExpertsUsed); err != nil {
			return fmt.Errorf("--experts %d: %w", o.ExpertsUsed, err)
		}
	}
	if o.TopP != 0 {
		if !(o.TopP > 0 && o.TopP < 1) {
			return fmt.Errorf("--moe-topp %g must be in (0, 1)", o.TopP)
		}
		if c.Experts == 0 {
			return fmt.Errorf("--moe-topp: the model has no experts")
		}
		c.Routing.TopP = o.TopP
	}
	return nil
}

// budgetArg writes a byte count as a --moe-budget value that asks for at
// least that much: one word (no space, unlike humanize's "756 KiB") and
// rounded up, never down, in the largest binary unit that still leaves ten
// or more of it, so it is within 10% of n.
func budgetArg(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= 10*u.size {
			return fmt.Sprintf("%d%s", (n+u.size-1)/u.size, u.name)
		}
	}
	return fmt.Sprint(n)
}
