//go:build !amd64 || purego

package engine

// Without assembly softmax and SwiGLU call expf element by element.

func expShift(x []float32, shift float32) {
	for i, v := range x {
		x[i] = expf(v - shift)
	}
}

func swiglu(g, u []float32) { swigluGo(g, u) }

// madF32 is y += x*a per element, fused (madF32Go).
func madF32(y, x []float32, a float32) { madF32Go(y, x, a) }

// dotGGML is ggml_vec_dot_f32 in the order of its AVX2 build (dot32Go),
// whatever the CPU, so results do not depend on the architecture.
func dotGGML(x, y []float32) float32 {
	np := len(x) &^ 31
	return dotTail(float64(dot32Go(x[:np], y[:np])), x[np:], y[np:])
}

// scaleF32 is x[i] *= a.
func scaleF32(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}
