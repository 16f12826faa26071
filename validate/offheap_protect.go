//go:build linux || darwin

package validate

import "syscall"

// protectNone takes every access to b away (the poison mode's quarantine).
func protectNone(b []byte) error { return syscall.Mprotect(b, syscall.PROT_NONE) }
