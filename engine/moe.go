package engine

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/kernels"
)

// moeBuffers holds what a MoE FFN needs per batch.
type moeBuffers struct {
	router []float32 // [batch][experts]
	sel    []int     // [batch][used] selected experts
	weight []float32 // [batch][used]
	out    []float32 // [batch][used][embd] each expert's output
	// list holds, expert after expert, the selections (i*used+k: token i's
	// k-th) that chose each expert, in token order; expert e's are
	// list[start[e]:start[e+1]]. fill is the cursor that writes them.
	list   []int32
	start  []int
	fill   []int
	need   []int     // the chosen experts, in order
	shared []float32 // [batch][embd] the shared experts' output, or nil
	sgate  []float32 // [batch] the shared experts' gate, or nil
	route  *routeScratch
	// serial runs the experts one after another, each product split over
	// the threads by rows (s.mm).
	serial expertScratch
	// par runs a prompt's experts concurrently, one scratch per thread
	// (nil with one thread): see expertTask.
	par *expertTask
}

// expertScratch is where one thread runs an expert on its gathered
// tokens: the products and buffers for up to len(in)/Embd of them.
type expertScratch struct {
	mm      *kernels.Products
	in, res []float32 // [tokens][embd] gathered inputs, outputs
	hb, hb2 []float32 // [tokens][expert ff]
	err     error
}

// expertChunk is the work of one thread: an expert (index x into the
// task's experts) on the selections list[lo:hi] that chose it.
type expertChunk struct {
	x, lo, hi int
}

// chunkTokens is the most tokens of one expert a chunk of a concurrent
// MoE batch takes: an expert most of the batch chose is split into
// several chunks (its weights read once per chunk), so that the threads
// finish together. A multiple of 4: chunks cut an expert's tokens where
// its whole-batch product would start a four-row kernel, so each token
// gets the same kernel, hence the same bits.
const chunkTokens = 64

func newMoEBuffers(m *Model, c *Config, b, threads int) *moeBuffers {
	mb := &moeBuffers{
		router: make([]float32, b*c.Experts),
		sel:    make([]int, b*c.ExpertsUsed),
		weight: make([]float32, b*c.ExpertsUsed),
		out:    make([]float32, b*c.ExpertsUsed*c.Embd),
		list:   make([]int32, b*c.ExpertsUsed),
		start:  make([]int, c.Experts+1),
		fill:   make([]int, c.Experts),
		route:  newRouteScratch(c.Experts, max(c.Routing.Groups, 1)),
		need:   make([]int, 0, c.Experts),
	}
	// The serial path's hidden buffers are the State's (hb, hb2).
	mb.serial = expertScratch{in: make([]float32, b*c.Embd), res: make([]float32, b*c.Embd)}
	if c.SharedFF > 0 {
		mb.shared = make([]float32, b*c.Embd)
	}
	if c.fam.sharedGate {
		mb.sgate = make([]float32, b)
	}
	if threads > 1 {
		mb.par = newExpertTask(m, c, b, threads)
	}
	return mb
}

// moeBufferFloats is the float32s of moeBuffers per batch token.
func moeBufferFloats(c *Config) int {
	n := c.Experts + c.ExpertsUsed*(c.Embd+2) + 2*c.Embd
	if c.SharedFF > 0 {
		n += c.Embd + 1
	}
	return n
}

// moeFFN is llama.cpp's build_moe_ffn for layer l: router logits, the
// family's routing (Routing.route), the weighted sum (in selection order)
// of each chosen expert's SiLU-gated FFN, and the shared experts' FFN
// added to it where the family has them (bailingmoe2). The experts run in
// order of their number, from the model's mapping or, for a paged model,
// from the pager's slots; a prompt batch on several threads runs them
// concurrently (expertTask), each output element from the same kernel and
// inputs as in order, so with the same bits.
func (s *State) moeFFN(l int, L *Layer, nb int) error {
	c, mb := s.c, s.moe
	E, X, K := c.Embd, c.Experts, c.ExpertsUsed
	s.matmul(L.Router, s.xb, mb.router, nb)
	mb.route.bonus = s.pg.bonusFor(l)
	for i := 0; i < nb; i++ {
		c.Routing.route(mb.router[i*X:(i+1)*X], L.ExpBias, mb.sel[i*K:(i+1)*K], mb.weight[i*K:(i+1)*K], mb.route)
	}
	need := mb.group(nb * K)
	if s.trace != nil {
		s.trace.Call(l, need)
	}
	// One token's experts run concurrently too (each expert on one
	// thread), unless paged, where the serial path computes each expert
	// as soon as its bytes are read: split by rows, an expert's products
	// (147-215 kB for qwen3moe-1b) are below what pays a hand-off
	// (Products.MatMul), so a token's experts ran on one thread.
	par := mb.par != nil && (nb > 1 || s.pg == nil) && s.thrash == nil && s.pool.Threads() > 1
	switch {
	case s.pg != nil:
		// the shared experts run while the misses are read
		if err := s.pagedExperts(l, L, need, nb, par); err != nil {
			return err
		}
	case par:
		if err := s.runExperts(L, l, need, nil); err != nil {
			return err
		}
		s.sharedExperts(L, nb)
	default:
		for _, e := range need {
			rows := mb.rows(e)
			s.expertUp(&mb.serial, L.GateExps[e], L.UpExps[e], rows)
			s.expertDown(&mb.serial, L.DownExps[e], rows)
		}
		s.sharedExperts(L, nb)
	}
	for i := 0; i < nb; i++ {
		o := s.xb2[i*E : (i+1)*E]
		copy(o, mb.out[i*K*E:(i*K+1)*E])
		for k := 1; k < K; k++ {
			if mb.sel[i*K+k] < 0 {
				continue // dropped by TopP
			}
			src := mb.out[(i*K+k)*E : (i*K+k+1)*E]
			for d := range o {
				o[d] += src[d]
			}
		}
	}
	if L.Shared.Gate != nil {
		for i, v := range mb.shared[:nb*E] {
			s.xb2[i] += v
		}
	}
	return nil
}

// sharedExperts computes the layer's shared experts' FFN of the batch (gated
// where the family has a shared-expert gate) into mb.shared, for moeFFN to
// add; a layer without them is left alone.
func (s *State) sharedExperts(L *Layer, nb int) {
	c, mb := s.c, s.moe
	E := c.Embd
	if L.Shared.Gate == nil {
		return
	}
	s.ffn(&L.Shared, c.SharedFF, mb.shared, nb)
	if L.SharedGate != nil {
		s.matmul(L.SharedGate, s.xb, mb.sgate, nb)
		for i := 0; i < nb; i++ {
			g := sigmoid(mb.sgate[i])
			for d := range mb.shared[i*E : (i+1)*E] {
				mb.shared[i*E+d] *= g
			}
		}
	}
}

// group sorts the first n selections by expert into list and returns the
// experts chosen, in order of their number.
func (mb *moeBuffers) group(n int) []int {
	clear(mb.start)
	for _, e := range mb.sel[:n] {
		if e >= 0 {
			mb.start[e+1]++
		}
	}
	need := mb.need[:0]
	for e := range mb.fill {
		if mb.start[e+1] > 0 {
			need = append(need, e)
		}
		mb.fill[e] = mb.start[e]
		mb.start[e+1] += mb.start[e]
	}
	for r, e := range mb.sel[:n] {
		if e >= 0 {
			mb.list[mb.fill[e]] = int32(r)
			mb.fill[e]++
		}
	}
	mb.need = need
	return need
}

// rows returns the selections that chose expert e.
func (mb *moeBuffers) rows(e int) []int32 { return mb.list[mb.start[e]:mb.start[e+1]] }

// expertUp gathers the inputs of the selections rows into ws.in and
// computes silu(gate x) * up x of them into ws.hb.
func (s *State) expertUp(ws *expertScratch, gate, up *Matrix, rows []int32) {
	E, F, K := s.c.Embd, s.c.ExpertFF, s.c.ExpertsUsed
	for j, r := range rows {
		i := int(r) / K
		copy(ws.in[j*E:(j+1)*E], s.xb[i*E:(i+1)*E])
	}
	n := len(rows)
	s.expertMatMul(ws, gate, ws.in, ws.hb, n)
	s.expertMatMul(ws, up, ws.in, ws.hb2, n)
	for j := 0; j < n; j++ {
		kernels.Swiglu(ws.hb[j*F:(j+1)*F], ws.hb2[j*F:(j+1)*F])
	}
}

// expertDown computes down ws.hb of the selections rows, each scaled by
// its routing weight into its selection's output.
func (s *State) expertDown(ws *expertScratch, down *Matrix, rows []int32) {
	mb, E := s.moe, s.c.Embd
	s.expertMatMul(ws, down, ws.hb, ws.res, len(rows))
	for j, r := range rows {
		w := mb.weight[r]
		dst := mb.out[int(r)*E : (int(r)+1)*E]
		for d, v := range ws.res[j*E : (j+1)*E] {
			dst[d] = v * w
		}
	}
}

// expertMatMul is an expert's product on ws: the serial scratch's goes
// through s.matmul (the thrash model, the threads), a worker's is its own.
func (s *State) expertMatMul(ws *expertScratch, w *Matrix, in, out []float32, n int) {
	if ws.mm == nil {
		s.matmul(w, in, out, n)
		return
	}
	ws.mm.MatMul(w, in, out, n)
}

// pagedExperts runs the experts need of layer L (number l) from the pager's
// slots, and its shared experts. The pool places the experts (in groups of
// at most its size) and the reads of a group's misses are all queued at
// once; while they are read, the next layer's predictions are queued
// (--moe-prefetch), the shared experts computed, then the group's experts:
// with par concurrently (runExperts, in the order of their reads), else in
// the order their bytes are in: the hits first, each miss as soon as its
// gate, up and down are read (or, when none is, the first queued). Every
// expert writes its own outputs, summed later in selection order, so the
// order of computing them changes no bit.
func (s *State) pagedExperts(l int, L *Layer, need []int, nb int, par bool) error {
	p, mb := s.pg, s.moe
	p.loader.SetProgress(p.prio(l))
	first := true
	return p.layers[l].pool.Run(need, p.placed, func(g []pager.Placement) error {
		if err := p.load(l, g, false); err != nil {
			return err
		}
		if first {
			if nb == 1 && (p.o.Prefetch > 0 || p.o.Stage > 0) {
				if err := s.prefetch(l); err != nil {
					return err
				}
			}
			s.sharedExperts(L, nb)
		}
		first = false
		if par {
			return s.runExperts(nil, l, nil, g)
		}
		pending := append(p.pending[:0], g...)
		for len(pending) > 0 {
			i := p.firstReady(l, pending)
			x := pending[i]
			pending = append(pending[:i], pending[i+1:]...)
			gate, err := p.matrix(l, x.Slot, 0)
			if err != nil {
				return err
			}
			up, err := p.matrix(l, x.Slot, 1)
			if err != nil {
				return err
			}
			rows := mb.rows(x.Expert)
			s.expertUp(&mb.serial, gate, up, rows)
			down, err := p.matrix(l, x.Slot, 2)
			if err != nil {
				return err
			}
			s.expertDown(&mb.serial, down, rows)
		}
		p.pending = pending
		return nil
	})
}

// expertTask runs a prompt batch's experts concurrently: the experts'
// tokens are cut into chunks (expertChunk), which the threads take from a
// shared counter, each computing its chunks on its own scratch, largest
// first so that they finish together. Splitting each product by rows
// instead, as the serial path does, hands off to the threads three times
// per expert for products too small to keep two threads busy.
type expertTask struct {
	s      *State
	l      int
	L      *Layer            // resident experts: L's matrices of need
	need   []int             // the experts of a resident layer
	placed []pager.Placement // or the slots of a paged layer's group
	chunks []expertChunk
	next   atomic.Int64
	work   []expertScratch // per thread
	// mats holds each placement's gate, up and down once ready[x] is set
	// (by the first thread to reach it, under mu: a slot's Matrix is
	// pointed at its bytes once).
	mats  [][3]*Matrix
	ready []atomic.Bool
	mu    sync.Mutex
}

func newExpertTask(m *Model, c *Config, b, threads int) *expertTask {
	t := &expertTask{
		chunks: make([]expertChunk, 0, c.Experts+b*c.ExpertsUsed/chunkTokens+1),
		work:   make([]expertScratch, threads),
		mats:   make([][3]*Matrix, c.Experts),
		ready:  make([]atomic.Bool, c.Experts),
	}
	n := min(b, chunkTokens)
	for w := range t.work {
		t.work[w] = expertScratch{
			// A pool of one: each thread's products run inline.
			mm:  kernels.NewProducts(kernels.NewPool(1), n, max(c.Embd, c.ExpertFF), m.q2lutCols()),
			in:  make([]float32, n*c.Embd),
			res: make([]float32, n*c.Embd),
			hb:  make([]float32, n*c.ExpertFF),
			hb2: make([]float32, n*c.ExpertFF),
		}
	}
	return t
}

// runExperts runs the experts need of resident layer L (l), or the
// placements g of a paged one, on every thread (expertTask).
func (s *State) runExperts(L *Layer, l int, need []int, g []pager.Placement) error {
	mb, t := s.moe, s.moe.par
	t.s, t.l, t.L, t.need, t.placed = s, l, L, need, g
	experts := len(need)
	if g != nil {
		experts = len(g)
	}
	t.chunks = t.chunks[:0]
	for x := range experts {
		e := t.expert(x)
		for lo := mb.start[e]; lo < mb.start[e+1]; lo += chunkTokens {
			t.chunks = append(t.chunks, expertChunk{x: x, lo: lo, hi: min(lo+chunkTokens, mb.start[e+1])})
		}
		t.ready[x].Store(false)
	}
	if g == nil {
		// Largest first; a paged group keeps its order, that of its reads.
		slices.SortStableFunc(t.chunks, func(a, b expertChunk) int { return (b.hi - b.lo) - (a.hi - a.lo) })
	}
	exact := s.mm.RowExact()
	for w := range t.work {
		t.work[w].mm.SetRowExact(exact)
		t.work[w].err = nil
	}
	t.next.Store(0)
	// Every range of the step runs Run, which takes chunks until none is
	// left: a thread that starts late finds the work done.
	n := s.pool.Threads() * 4
	s.pool.Run(t, n, 1, true)
	t.s, t.L, t.need, t.placed = nil, nil, nil, nil
	for w := range t.work {
		if err := t.work[w].err; err != nil {
			return err
		}
	}
	return nil
}

// expert returns the number of the task's x-th expert.
func (t *expertTask) expert(x int) int {
	if t.placed != nil {
		return t.placed[x].Expert
	}
	return t.need[x]
}

// Run computes chunks on thread w until none is left (see runExperts).
func (t *expertTask) Run(_, _, w int) {
	ws := &t.work[w]
	for {
		i := int(t.next.Add(1)) - 1
		if i >= len(t.chunks) {
			return
		}
		c := t.chunks[i]
		gate, up, down, err := t.matrices(c.x)
		if err != nil {
			if ws.err == nil {
				ws.err = err
			}
			continue
		}
		rows := t.s.moe.list[c.lo:c.hi]
		t.s.expertUp(ws, gate, up, rows)
		t.s.expertDown(ws, down, rows)
	}
}

// matrices returns the gate, up and down matrices of the task's x-th
// expert: the layer's, or for a paged layer its slot's once read.
func (t *expertTask) matrices(x int) (gate, up, down *Matrix, err error) {
	if t.placed == nil {
		e := t.need[x]
		return t.L.GateExps[e], t.L.UpExps[e], t.L.DownExps[e], nil
	}
	if !t.ready[x].Load() {
		if err := t.load(x); err != nil {
			return nil, nil, nil, err
		}
	}
	m := &t.mats[x]
	return m[0], m[1], m[2], nil
}

// load waits for the matrices of the task's x-th placement, once.
func (t *expertTask) load(x int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ready[x].Load() {
		return nil
	}
	for part := range 3 {
		m, err := t.s.pg.matrix(t.l, t.placed[x].Slot, part)
		if err != nil {
			return err
		}
		t.mats[x][part] = m
	}
	t.ready[x].Store(true)
	return nil
}

// prefetch is the pre-gated prefetch (the seeds' E103): the next MoE
// layer's router, with the family's full decision rule, applied to this
// layer's FFN input predicts the experts the token will use there; those
// not resident are queued into free or evictable slots (Pool.Prefetch),
// or with PagerOptions.Stage into the staging slots (stageLoad).
func (s *State) prefetch(l int) error {
	p := s.pg
	l2 := l + 1
	if l2 >= len(p.layers) || p.layers[l2] == nil {
		return nil
	}
	L2 := &s.m.Layers[l2]
	s.matmul(L2.Router, s.xb, p.preLog, 1)
	p.pre.bonus = p.bonusFor(l2)
	p.preRouting.route(p.preLog, L2.ExpBias, p.preSel, p.preW, p.pre)
	if p.o.Stage > 0 {
		return p.stageLoad(l2, p.preSel)
	}
	g := p.layers[l2].pool.Prefetch(p.preSel, p.prePlaced[:0])
	return p.load(l2, g, true)
}
