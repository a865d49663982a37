package engine

// Rewind keeps the first n positions of the KV cache and drops the rest, so
// the next Eval continues at position n: a chat turn whose prompt agrees
// with the cached tokens only up to n re-evaluates from there instead of
// from the start. Each position's keys and values depend only on the
// tokens before it, so what is kept stays valid. n outside 0..Pos() is
// ignored.
//
// A model with recurrent layers keeps one state for the last position
// only, which cannot be taken back to an earlier one: there Rewind to any
// n below Pos() empties the state (Pos() is then 0 and the caller
// re-evaluates from the start; it must read Pos() after Rewind).
func (s *State) Rewind(n int) {
	switch {
	case n < 0 || n >= s.pos:
	case s.rec != nil:
		s.Reset()
	default:
		s.pos = n
	}
}
