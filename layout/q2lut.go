package layout

import (
	"fmt"
)

// Q2_K block: scales[16] (low nibble scale, high nibble min), qs[64]
// (2-bit codes), d f16, dmin f16; 256 weights in 84 bytes.
const (
	q2kBytes = 84
	q8kBytes = 292 // Q8_K block: d f32, qs[256] int8, bsums[16] int16
	// GroupRows is the number of rows a q2lut group interleaves.
	GroupRows = 16
)

// q2kCode returns the 2-bit code of column c (0..255) of a Q2_K block:
// byte 16 + 32*(c/128) + c%32, bits 2*((c%128)/32).
func q2kCode(b []byte, c int) uint8 {
	return (b[16+32*(c/128)+c%32] >> (2 * ((c % 128) / 32))) & 3
}

// packGroup repacks n Q2_K blocks (blks[r] is row r's block of the same
// 256 columns) into one group of n*84 bytes at g:
//
//	g[0:2n]      d of rows 0..n-1 (fp16, little-endian)
//	g[2n:4n]     dmin of rows 0..n-1
//	g[4n:20n]    16 sub-blocks x n rows: the Q2_K scale byte of sub-block j
//	             of row r at 4n + j*n + r
//	g[20n:84n]   64 x n code bytes: byte k of row r at 20n + k*n + r holds
//	             the pair codes of columns 4k,4k+1 (low nibble) and
//	             4k+2,4k+3 (high nibble); a pair code is q(c) | q(c+1)<<2
//
// The files use n = 16 only (GroupRows).
func packGroup(g []byte, blks [][]byte) {
	n := len(blks)
	for r, b := range blks {
		copy(g[2*r:], b[80:82])
		copy(g[2*n+2*r:], b[82:84])
		for j := 0; j < 16; j++ {
			g[4*n+j*n+r] = b[j]
		}
		for k := 0; k < 64; k++ {
			c := 4 * k
			lo := q2kCode(b, c) | q2kCode(b, c+1)<<2
			hi := q2kCode(b, c+2) | q2kCode(b, c+3)<<2
			g[20*n+k*n+r] = lo | hi<<4
		}
	}
}

// unpackGroup is packGroup's inverse.
func unpackGroup(blks [][]byte, g []byte) {
	n := len(blks)
	for r, b := range blks {
		copy(b[80:82], g[2*r:])
		copy(b[82:84], g[2*n+2*r:])
		for j := 0; j < 16; j++ {
			b[j] = g[4*n+j*n+r]
		}
		clear(b[16:80])
		for k := 0; k < 64; k++ {
			v := g[20*n+k*n+r]
			for i := 0; i < 4; i++ {
				c := 4*k + i
				q := (v >> (2 * i)) & 3
				b[16+32*(c/128)+c%32] |= q << (2 * ((c % 128) / 32))
			}
		}
	}
}

// q2lutShape checks a chunk of whole experts and returns the bytes of one
// row and one expert.
func q2lutShape(n int64, ne0, rowsPerExpert int64) (rb, eb int64, err error) {
	if ne0%256 != 0 || rowsPerExpert <= 0 {
		return 0, 0, fmt.Errorf("q2lut: rows of %d weights are not Q2_K rows", ne0)
	}
	rb = ne0 / 256 * q2kBytes
	eb = rb * rowsPerExpert
	if n%eb != 0 {
		return 0, 0, fmt.Errorf("q2lut: %d bytes are not whole experts of %d bytes", n, eb)
	}
	return rb, eb, nil
}

// Q2LUTExpertBytes returns the bytes of one q2lut expert (rowsPerExpert
// rows of ne0 weights) after checking that size bytes are whole experts:
// each expert's bytes are contiguous and self-contained, so a kernel can
// run one from any buffer holding it alone.
func Q2LUTExpertBytes(size, ne0, rowsPerExpert int64) (int64, error) {
	_, eb, err := q2lutShape(size, ne0, rowsPerExpert)
	return eb, err
}

// convertQ2LUT packs (or unpacks) whole experts of Q2_K rows. Within each
// expert, every 16 consecutive rows become ne0/256 groups, one per 256
// columns, in column order, filling the same bytes the 16 rows filled. The
// last rowsPerExpert%16 rows of each expert stay Q2_K rows.
func convertQ2LUT(dst, src []byte, ne0, rowsPerExpert int64, pack bool) error {
	rb, eb, err := q2lutShape(int64(len(src)), ne0, rowsPerExpert)
	if err != nil {
		return err
	}
	if len(dst) != len(src) {
		return fmt.Errorf("q2lut: %d bytes in, %d out", len(src), len(dst))
	}
	nb := ne0 / 256
	full := rowsPerExpert / GroupRows * GroupRows
	blks := make([][]byte, GroupRows)
	for e := int64(0); e < int64(len(src)); e += eb {
		for r0 := int64(0); r0 < full; r0 += GroupRows {
			base := e + r0*rb
			for b := int64(0); b < nb; b++ {
				g := base + b*GroupRows*q2kBytes
				if pack {
					for r := range blks {
						blks[r] = src[base+int64(r)*rb+b*q2kBytes:][:q2kBytes]
					}
					packGroup(dst[g:g+GroupRows*q2kBytes], blks)
				} else {
					for r := range blks {
						blks[r] = dst[base+int64(r)*rb+b*q2kBytes:][:q2kBytes]
					}
					unpackGroup(blks, src[g:g+GroupRows*q2kBytes])
				}
			}
		}
		tail := e + full*rb
		copy(dst[tail:e+eb], src[tail:e+eb])
	}
	return nil
}

// PackQ2LUT repacks whole experts of Q2_K rows (ne0 weights each,
// rowsPerExpert rows per expert) from src into dst, of the same size.
func PackQ2LUT(dst, src []byte, ne0, rowsPerExpert int64) error {
	return convertQ2LUT(dst, src, ne0, rowsPerExpert, true)
}

// UnpackQ2LUT restores the Q2_K rows PackQ2LUT repacked, byte for byte.
func UnpackQ2LUT(dst, src []byte, ne0, rowsPerExpert int64) error {
	return convertQ2LUT(dst, src, ne0, rowsPerExpert, false)
}
