package engine

// Rewind keeps the first n positions of the KV cache and drops the rest, so
// the next Eval continues at position n: a chat turn whose prompt agrees
// with the cached tokens only up to n re-evaluates from there instead of
// from the start. Each position's keys and values depend only on the
// tokens before it, so what is kept stays valid. n outside 0..Pos() is
// ignored.
//
// A model with recurrent layers (qwen35's Gated DeltaNet, bailingmoe3's
// KDA) keeps one state that summarizes every position evaluated; it cannot
// be cut back to a shorter prefix, so there any n below Pos() empties the
// state (as Reset) and the caller, reading Pos(), evaluates its tokens
// from the start.
func (s *State) Rewind(n int) {
	switch {
	case n < 0 || n >= s.pos:
	case s.recurrentState():
		s.Reset()
	default:
		s.pos = n
	}
}
