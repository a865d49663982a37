package layout

import (
	"encoding/binary"
	"fmt"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/quant"
)

// Bytes per 64 weights of the per-64-scale ternary layouts: an fp16 scale
// and 13 bytes of 5 trits (ter3), or 16 bytes of 2-bit fields (ter2).
const (
	ter3Group = 2 + ter3Codes
	ter3Codes = 13
	ter2Group = 2 + 16
)

// ternaryRow is one row as the ternary layouts see it: a code 0, 1 or 2
// (weight -1, 0, +1 times the scale) per weight and one fp16 scale (bits)
// per 64 weights.
type ternaryRow struct {
	codes  []uint8
	scales []uint16
}

func newTernaryRow(ne0 int64) *ternaryRow {
	return &ternaryRow{codes: make([]uint8, ne0), scales: make([]uint16, ne0/64)}
}

// srcBlockBytes returns the block size in bytes of a ternary source type.
func srcBlockBytes(t gguf.Type) int64 {
	switch t {
	case gguf.TypeQ2_0:
		return 18
	case gguf.TypeTQ1_0:
		return 54
	}
	return 66
}

// decode reads one row of type t into r. A block that is not exactly
// ternary (a fourth code, or TQ1_0 bytes ggml's quantizer cannot write, so
// that re-encoding would not give them back) is an error naming the block.
func (r *ternaryRow) decode(t gguf.Type, src []byte) (block int64, err error) {
	bs := srcBlockBytes(t)
	for b := int64(0); b*bs < int64(len(src)); b++ {
		x := src[b*bs : (b+1)*bs]
		switch t {
		case gguf.TypeQ2_0:
			r.scales[b] = binary.LittleEndian.Uint16(x)
			for j := 0; j < 64; j++ {
				q := (x[2+j/4] >> (2 * (j % 4))) & 3
				if q == 3 {
					return b, fmt.Errorf("weight %d uses the fourth code (+2), which is not ternary", j)
				}
				r.codes[b*64+int64(j)] = q
			}
		case gguf.TypeTQ2_0:
			d := binary.LittleEndian.Uint16(x[64:])
			for j := 0; j < 4; j++ {
				r.scales[b*4+int64(j)] = d
			}
			for j := 0; j < 256; j++ {
				q := (x[32*(j/128)+j%32] >> (2 * ((j % 128) / 32))) & 3
				if q == 3 {
					return b, fmt.Errorf("weight %d uses the fourth code (+2), which is not ternary", j)
				}
				r.codes[b*256+int64(j)] = q
			}
		case gguf.TypeTQ1_0:
			d := binary.LittleEndian.Uint16(x[52:])
			for j := 0; j < 4; j++ {
				r.scales[b*4+int64(j)] = d
			}
			c := r.codes[b*256 : (b+1)*256]
			for i, v := range x[:52] {
				// Bytes 0-31 hold weights n*32+m, 32-47 hold 160+n*16+m (5
				// trits each), 48-51 hold 240+n*4+m (4 trits and a 0).
				m, first, stride, nt := i, 0, 32, 5
				if i >= 48 {
					m, first, stride, nt = i-48, 240, 4, 4
				} else if i >= 32 {
					m, first, stride, nt = i-32, 160, 16, 5
				}
				q := uint8(0)
				for n := 0; n < nt; n++ {
					tr := quant.Trit(v, n)
					c[first+n*stride+m] = tr
					q = q*3 + tr
				}
				if nt == 4 {
					q *= 3
				}
				if quant.PackTrits(q) != v {
					return b, fmt.Errorf("byte %d (0x%02x) is not a TQ1_0 encoding of five trits, so it cannot be restored", i, v)
				}
			}
		}
	}
	return 0, nil
}

// encode writes r as one row of type t.
func (r *ternaryRow) encode(t gguf.Type, dst []byte) error {
	bs := srcBlockBytes(t)
	for b := int64(0); b*bs < int64(len(dst)); b++ {
		x := dst[b*bs : (b+1)*bs]
		clear(x)
		if t == gguf.TypeQ2_0 {
			binary.LittleEndian.PutUint16(x, r.scales[b])
			for j := 0; j < 64; j++ {
				x[2+j/4] |= r.codes[b*64+int64(j)] << (2 * (j % 4))
			}
			continue
		}
		s := r.scales[b*4 : b*4+4]
		if s[0] != s[1] || s[0] != s[2] || s[0] != s[3] {
			return fmt.Errorf("block %d: the four scales of 64 weights differ, %s has one per 256", b, t)
		}
		c := r.codes[b*256 : (b+1)*256]
		if t == gguf.TypeTQ2_0 {
			binary.LittleEndian.PutUint16(x[64:], s[0])
			for j := 0; j < 256; j++ {
				x[32*(j/128)+j%32] |= c[j] << (2 * ((j % 128) / 32))
			}
			continue
		}
		binary.LittleEndian.PutUint16(x[52:], s[0])
		for i := range x[:52] {
			m, first, stride, nt := i, 0, 32, 5
			if i >= 48 {
				m, first, stride, nt = i-48, 240, 4, 4
			} else if i >= 32 {
				m, first, stride, nt = i-32, 160, 16, 5
			}
			q := uint8(0)
			for n := 0; n < nt; n++ {
				q = q*3 + c[first+n*stride+m]
			}
			if nt == 4 {
				q *= 3
			}
			x[i] = quant.PackTrits(q)
		}
	}
	return nil
}

// put writes r as one row of layout k: the row's scales (fp16 each), then
// its codes, 64 weights at a time. Ter3: 13 bytes per 64 weights, byte m
// holding weights m, m+13, m+26, m+39, m+52 as trits (PackTrits order,
// weight 64 = m+52 for m = 12 being a 0 weight, code 1). Ter2 and
// Ter2S128: 16 bytes per 64 weights, byte m holding weights m, m+16, m+32,
// m+48 in bits 0-1, 2-3, 4-5, 6-7. Ter2S128 has one scale per 128 weights
// (see mergeScales).
func (r *ternaryRow) put(k Kind, dst []byte) {
	ng := len(r.scales)
	scales := r.scales
	if k == Ter2S128 {
		scales = mergeScales(r)
	}
	for i, s := range scales {
		binary.LittleEndian.PutUint16(dst[2*i:], s)
	}
	codes := dst[2*len(scales):]
	for g := 0; g < ng; g++ {
		c := r.codes[64*g : 64*g+64]
		if k == Ter3 {
			out := codes[g*ter3Codes : (g+1)*ter3Codes]
			for m := range out {
				q := uint8(0)
				for n := 0; n < 5; n++ {
					t := uint8(1)
					if w := n*ter3Codes + m; w < 64 {
						t = c[w]
					}
					q = q*3 + t
				}
				out[m] = quant.PackTrits(q)
			}
			continue
		}
		out := codes[g*16 : (g+1)*16]
		for m := range out {
			out[m] = c[m] | c[m+16]<<2 | c[m+32]<<4 | c[m+48]<<6
		}
	}
}

// get reads one row of layout k into r (put's inverse; a Ter2S128 scale is
// given to both of its groups).
func (r *ternaryRow) get(k Kind, src []byte) {
	ng := len(r.scales)
	ns := ng
	if k == Ter2S128 {
		ns = ng / 2
	}
	for g := 0; g < ng; g++ {
		si := g
		if k == Ter2S128 {
			si = g / 2
		}
		r.scales[g] = binary.LittleEndian.Uint16(src[2*si:])
	}
	codes := src[2*ns:]
	for g := 0; g < ng; g++ {
		c := r.codes[64*g : 64*g+64]
		if k == Ter3 {
			in := codes[g*ter3Codes : (g+1)*ter3Codes]
			for m, v := range in {
				for n := 0; n < 5; n++ {
					if w := n*ter3Codes + m; w < 64 {
						c[w] = quant.Trit(v, n)
					}
				}
			}
			continue
		}
		in := codes[g*16 : (g+1)*16]
		for m, v := range in {
			for n := 0; n < 4; n++ {
				c[m+16*n] = (v >> (2 * n)) & 3
			}
		}
	}
}

// mergeScales returns one scale per 128 weights. Equal scales are kept as
// they are (so TQ1_0 and TQ2_0 stay lossless); otherwise the merged scale
// is the least-squares one for the unchanged codes, (n1*d1 + n2*d2) /
// (n1 + n2) with n the nonzero weights of each group, rounded to fp16.
func mergeScales(r *ternaryRow) []uint16 {
	out := make([]uint16, len(r.scales)/2)
	for i := range out {
		s1, s2 := r.scales[2*i], r.scales[2*i+1]
		if s1 == s2 {
			out[i] = s1
			continue
		}
		var n [2]float64
		for j, c := range r.codes[128*i : 128*i+128] {
			if c != 1 {
				n[j/64]++
			}
		}
		if n[0]+n[1] == 0 {
			out[i] = s1
			continue
		}
		d := (float64(n[0]*float64(quant.FP16ToFP32(s1))) + float64(n[1]*float64(quant.FP16ToFP32(s2)))) / (n[0] + n[1])
		out[i] = quant.FP32ToFP16(float32(d))
	}
	return out
}

// ternaryShape checks whole rows of ne0 weights of type t.
func ternaryShape(t gguf.Type, ne0 int64) error {
	if ne0 <= 0 || ne0%int64(t.BlockSize()) != 0 {
		return fmt.Errorf("rows of %d weights are not whole %s blocks", ne0, t)
	}
	return nil
}

// ternaryRows checks that layout k takes (verb "take") or gives ("give")
// type t on rows of ne0 weights, and returns the row sizes of src and dst
// and the row count, which in and out bytes must hold whole. unpack says
// the layout is src.
func ternaryRows(k Kind, t gguf.Type, verb string, ne0 int64, in, out int, unpack bool) (srb, drb, rows int64, err error) {
	if err := Supports(k, t); err != nil || !k.Ternary() {
		return 0, 0, 0, fmt.Errorf("layout %s does not %s %s", k, verb, t)
	}
	if err := ternaryShape(t, ne0); err != nil {
		return 0, 0, 0, err
	}
	srb, _ = t.RowSize(ne0)
	drb = rowBytes(k, ne0)
	if unpack {
		srb, drb = drb, srb
	}
	rows = int64(in) / srb
	if rows*srb != int64(in) || int64(out) != rows*drb {
		return 0, 0, 0, fmt.Errorf("layout %s: %d bytes in, %d out: not whole rows of %d and %d", k, in, out, srb, drb)
	}
	return srb, drb, rows, nil
}

// PackTernary converts whole rows of type from (Q2_0, TQ1_0 or TQ2_0; ne0
// weights each) in src into ternary layout k in dst. firstRow is src's
// first row in the tensor, for errors: a block that is not ternary (a
// fourth code, +2) is a *BlockError naming it.
func PackTernary(k Kind, from gguf.Type, dst, src []byte, ne0, firstRow int64) error {
	srb, drb, rows, err := ternaryRows(k, from, "take", ne0, len(src), len(dst), false)
	if err != nil {
		return err
	}
	if k == Ter2S128 && ne0%128 != 0 {
		return fmt.Errorf("layout ter2s128: rows of %d weights are not whole groups of 128", ne0)
	}
	row := newTernaryRow(ne0)
	bpr := ne0 / int64(from.BlockSize())
	for i := int64(0); i < rows; i++ {
		if b, err := row.decode(from, src[i*srb:(i+1)*srb]); err != nil {
			return &BlockError{Row: firstRow + i, Block: (firstRow+i)*bpr + b, Msg: err.Error()}
		}
		row.put(k, dst[i*drb:(i+1)*drb])
	}
	return nil
}

// UnpackTernary converts whole rows of layout k back to type to.
func UnpackTernary(k Kind, to gguf.Type, dst, src []byte, ne0, firstRow int64) error {
	srb, drb, rows, err := ternaryRows(k, to, "give", ne0, len(src), len(dst), true)
	if err != nil {
		return err
	}
	row := newTernaryRow(ne0)
	for i := int64(0); i < rows; i++ {
		row.get(k, src[i*srb:(i+1)*srb])
		if err := row.encode(to, dst[i*drb:(i+1)*drb]); err != nil {
			return fmt.Errorf("row %d: %w", firstRow+i, err)
		}
	}
	return nil
}
