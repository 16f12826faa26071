package e2a

import (
	"testing"

	"github.com/e2atap/e2atap/redact"
)

// TestHasAVX2: e2a takes redact's CPU probe (redact's TestHasAVX2 holds it
// to x/sys/cpu), and its kernel runs only with AVX2.
func TestHasAVX2(t *testing.T) {
	if HasAVX2() != redact.HasAVX2() {
		t.Fatalf("e2a.HasAVX2() = %v, redact.HasAVX2() = %v", HasAVX2(), redact.HasAVX2())
	}
	if haveKernel && !redact.HasAVX2() {
		t.Fatal("the AVX2 kernel is on without AVX2")
	}
}
