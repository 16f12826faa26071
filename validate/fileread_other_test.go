//go:build !linux

package validate

import (
	"os"
	"testing"
)

// rawReadable: fileReader makes no raw reads here.
func rawReadable(*testing.T, *os.File) bool { return false }
