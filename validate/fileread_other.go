//go:build !linux

package validate

// rawReads: fileReader reads by ReadAt alone.
const rawReads = false

func (r *fileReader) rawRead(fd uintptr) {}
