//go:build unix && !(linux || darwin)

package validate

import "errors"

// protectNone: where package syscall has no mprotect (freebsd), a poisoned
// piece is unmapped at once instead of being quarantined (the poison mode
// is for tests).
func protectNone([]byte) error { return errors.ErrUnsupported }
