//go:build !unix

package logdir

import "io/fs"

// fileID: without device and inode, files are known by fingerprint alone.
func fileID(fs.FileInfo) (dev, ino uint64, nlink uint64, ok bool) { return 0, 0, 1, false }
