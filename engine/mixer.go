package engine

// layerMixer is a layer's token mixer when its family replaces the
// standard attention block (bailingmoe3: kdaLayer, mlaLayer). It is chosen
// at load (family.mixer), so the forward pass dispatches on the layer's
// data, not on the architecture.
type layerMixer interface {
	// contextFloats is the float32s of state it keeps per context of ctx
	// positions (a latent KV cache, a recurrent state), allocated once in
	// NewState.
	contextFloats(ctx int) int
	// scratchFloats is the float32s of buffers mix needs for a batch of
	// nb tokens with threads workers and a context of ctx positions.
	scratchFloats(nb, threads, ctx int) int
	// recurrent reports whether its state summarizes every position seen
	// (it cannot be cut back to a shorter prefix, and Reset clears it).
	recurrent() bool
	// mix reads the normalized inputs s.xb of nb tokens at positions
	// s.pos.. and writes its output (before the residual add) to s.xb2,
	// updating st (its contextFloats) and using scratch.
	mix(s *State, st, scratch []float32, nb int)
}

// newMixerState allocates the state of the layers with mixers, and the
// scratch they share, for a context of ctx positions and batches of b.
func (s *State) newMixerState(ctx, b, threads int) {
	need := 0
	for l := range s.m.Layers {
		mx := s.m.Layers[l].Mixer
		if mx == nil {
			continue
		}
		if s.mix == nil {
			s.mix = make([][]float32, len(s.m.Layers))
		}
		s.mix[l] = make([]float32, mx.contextFloats(ctx))
		need = max(need, mx.scratchFloats(b, threads, ctx))
	}
	s.mixScratch = make([]float32, need)
}

// resetMixers clears the recurrent mixers' state: a new sequence starts
// from zero state (the latent caches are overwritten position by position).
func (s *State) resetMixers() {
	for l, st := range s.mix {
		if st != nil && s.m.Layers[l].Mixer.recurrent() {
			clear(st)
		}
	}
}

// recurrentState reports whether some layer keeps a recurrent state.
func (s *State) recurrentState() bool {
	for l, st := range s.mix {
		if st != nil && s.m.Layers[l].Mixer.recurrent() {
			return true
		}
	}
	return false
}

// mixerTokenFloats is the float32s per batch token of the mixers' scratch
// (for sizing the default batch).
func mixerTokenFloats(m *Model) int {
	n := 0
	for i := range m.Layers {
		if mx := m.Layers[i].Mixer; mx != nil {
			n = max(n, mx.scratchFloats(2, 1, 1)-mx.scratchFloats(1, 1, 1))
		}
	}
	return n
}

// recurrentMixerFloats is the float32s of the recurrent mixers' state.
func (s *State) recurrentMixerFloats() int {
	n := 0
	for l, st := range s.mix {
		if st != nil && s.m.Layers[l].Mixer.recurrent() {
			n += len(st)
		}
	}
	return n
}
