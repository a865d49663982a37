//go:build amd64 && !purego

package kernels

//go:noescape
func expfAVX2(dst, src *float32, quads int, shift float32)

//go:noescape
func siluMulAVX2(x, y *float32, quads int)

// expShift sets x[i] = Expf(x[i] - shift), four at a time with AVX2 (the
// same bits as Expf, several times faster).
func expShift(x []float32, shift float32) {
	head := 0
	if useAVX2 && len(x) >= 4 {
		head = len(x) &^ 3
		expfAVX2(&x[0], &x[0], head/4, shift)
	}
	for i := head; i < len(x); i++ {
		x[i] = Expf(x[i] - shift)
	}
}

// Swiglu is ggml_swiglu_split: g[i] = silu(g[i]) * u[i] with
// silu(x) = x/(1+Expf(-x)), four at a time with AVX2 (the same bits).
func Swiglu(g, u []float32) {
	u = u[:len(g)]
	head := 0
	if useAVX2 && len(g) >= 4 {
		head = len(g) &^ 3
		siluMulAVX2(&g[0], &u[0], head/4)
	}
	swigluGo(g[head:], u[head:])
}

//go:noescape
func madFMA(y, x *float32, octs int, a float32)

// MadF32 is y += x*a per element with one rounding (ggml_vec_mad_f32's
// FMA), eight at a time with AVX2 and madF32Go for the rest.
func MadF32(y, x []float32, a float32) {
	x = x[:len(y)]
	head := 0
	if useAVX2 && len(y) >= 8 {
		head = len(y) &^ 7
		madFMA(&y[0], &x[0], head/8, a)
	}
	madF32Go(y[head:], x[head:], a)
}

//go:noescape
func dot32FMA(x, y *float32, n int) float32

// DotGGML is ggml_vec_dot_f32 as ggml-cpu's AVX2 build computes it: the
// first n&^31 products in dot32FMA's order, the rest added in float64.
func DotGGML(x, y []float32) float32 {
	np := len(x) &^ 31
	var s float64
	if useAVX2 && np > 0 {
		s = float64(dot32FMA(&x[0], &y[0], np))
	} else {
		s = float64(dot32Go(x[:np], y[:np]))
	}
	return dotTail(s, x[np:], y[np:])
}

//go:noescape
func scaleAVX2(x *float32, octs int, a float32)

// ScaleF32 is x[i] *= a, eight at a time with AVX2.
func ScaleF32(x []float32, a float32) {
	head := 0
	if useAVX2 && len(x) >= 8 {
		head = len(x) &^ 7
		scaleAVX2(&x[0], head/8, a)
	}
	for i := head; i < len(x); i++ {
		x[i] *= a
	}
}
