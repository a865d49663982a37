// Package pager is the bookkeeping of an expert pager: per-layer pools of
// slots that hold the experts of a mixture-of-experts model which are not
// mapped into memory, the eviction policies that decide which expert a
// full pool gives up (least recently used, decayed frequency, and Belady's
// clairvoyant optimum for the simulator), expert traces, the offline
// simulator that replays a trace under any pool size and policy, and the
// readers that fill slots from the file (with a model of a device's flash
// for benchmarks).
//
// The pool state is a pure function of the sequence of calls made to it,
// never of timing: the runtime (package engine) asks a Pool where each
// expert goes at fixed points of the forward pass and only the reading
// happens in the background. That is what makes a cache-aware (biased) run
// reproducible bit for bit, and what lets the simulator predict the
// runtime's hit rate exactly: both drive the same Pool.
package pager
