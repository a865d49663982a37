// Package headprune shrinks a model's output head to the vocabulary rows
// that matter.
//
// A pruned head keeps K rows of the output matrix, copied byte for byte
// whatever their type, in ascending id order, in a new output.weight of
// shape [n_embd, K]; a new I32 tensor output_ids.weight holds the
// vocabulary id of each row. token_embd.weight stays whole so every token
// can still be read as input. A runtime computes logits for the K rows and
// scatters them to their ids; every other id scores -inf. The head is
// recorded in metadata (head.*) so readers can tell it from a full one.
//
// The package decides which ids to keep (ranked ids, specials, padding to
// a multiple of 8 for the fast kernels) and edits a build plan; it does no
// I/O of its own.
package headprune
