//go:build !amd64 || purego

package kernels

// Without assembly softmax and SwiGLU call expf element by element.

func expShift(x []float32, shift float32) {
	for i, v := range x {
		x[i] = Expf(v - shift)
	}
}

func Swiglu(g, u []float32) { swigluGo(g, u) }

// MadF32 is y += x*a per element, fused (madF32Go).
func MadF32(y, x []float32, a float32) { madF32Go(y, x, a) }

// DotGGML is ggml_vec_dot_f32 in the order of its AVX2 build (dot32Go),
// whatever the CPU, so results do not depend on the architecture.
func DotGGML(x, y []float32) float32 {
	np := len(x) &^ 31
	return dotTail(float64(dot32Go(x[:np], y[:np])), x[np:], y[np:])
}

// ScaleF32 is x[i] *= a.
func ScaleF32(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}
