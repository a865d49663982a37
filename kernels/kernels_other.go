//go:build !(amd64 || arm64 || arm) || purego

package kernels

// kernelSets lists the kernel sets this build can select: the portable Go
// kernels only.
func kernelSets() []string { return []string{"portable"} }

// installKernels has nothing to switch: the portable kernels are installed.
func installKernels(string) {}
