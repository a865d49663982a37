//go:build arm && !purego

package kernels

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// armVariants returns the assembly variants this CPU runs, logging which.
func armVariants(t *testing.T) []*armSet {
	t.Helper()
	if !cpu.ARM.HasNEON {
		t.Logf("arm kernels: none run (cpu.ARM.HasNEON false)")
		return nil
	}
	t.Logf("arm kernels: armv7 neon runs (Q8_0, Q4_K)")
	return []*armSet{&neonSet}
}
