//go:build !(amd64 || arm64 || arm) || purego

package kernels

// kernelSetNames is the table of kernel sets without assembly (see
// TestKernelSelection): the portable one.
var kernelSetNames = map[string]map[string]string{"portable": portableKernelNames}
