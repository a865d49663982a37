// Package layout holds the byte formats of repacked tensors: q2lut (Q2_K
// experts regrouped 16 rows x 256 columns for table-lookup kernels) and the
// ternary layouts of Q2_0, TQ1_0 and TQ2_0 tensors (ter3: base-3, 5 weights
// per byte, per-64 scales; ter2: 2-bit fields, per-64 scales; ter2s128:
// 2-bit fields, per-128 scales, lossy). It packs and unpacks whole rows and
// records which tensors are repacked; the build operation (package ops)
// turns that into plan transforms, so no layout has an I/O path of its own.
//
// A repacked tensor is never mistaken for its original type: it is stored
// under a new name (the original name plus "." and the layout), which no
// llama.cpp loader looks up, and listed in three metadata arrays
// (KeyTensors, KeyKinds, KeyTypes). The formats are in docs/layouts.md.
package layout
