package redact

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestHasAVX2 checks the package's own CPUID probe against x/sys/cpu's
// (which the package itself may not import: it uses only the standard
// library).
func TestHasAVX2(t *testing.T) {
	if got, want := hasAVX2(), cpu.X86.HasAVX2; got != want {
		t.Fatalf("hasAVX2() = %v, x/sys/cpu says %v", got, want)
	}
	if vecRuns && !hasAVX2() {
		t.Fatal("the AVX2 kernel is on without AVX2")
	}
}
