//go:build unix

package logdir

import (
	"io/fs"
	"syscall"
)

// fileID returns device and inode of a file, and whether the platform has
// them.
func fileID(fi fs.FileInfo) (dev, ino uint64, nlink uint64, ok bool) {
	st, isStat := fi.Sys().(*syscall.Stat_t)
	if !isStat {
		return 0, 0, 1, false
	}
	return uint64(st.Dev), uint64(st.Ino), uint64(st.Nlink), true //nolint:unconvert // types differ by platform
}
