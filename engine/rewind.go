package engine

// Rewind keeps the first n positions of the KV cache and drops the rest, so
// the next Eval continues at position n: a chat turn whose prompt agrees
// with the cached tokens only up to n re-evaluates from there instead of
// from the start. Each position's keys and values depend only on the
// tokens before it, so what is kept stays valid. n outside 0..Pos() is
// ignored.
func (s *State) Rewind(n int) {
	if n >= 0 && n < s.pos {
		s.pos = n
	}
}
