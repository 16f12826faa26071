package validate

import (
	"io"
	"os"
	"syscall"
)

// fileReader reads a regular file by offset, for one goroutine at a time
// (readFramesFile, readLinesFile, a split's chunk slot): what the page cache holds is
// read by a raw preadv2(RWF_NOWAIT) (fileread_linux.go), which the Go
// scheduler does not see as a system call, and anything else (a page not
// cached, which would wait for the disk; a kernel or file system without
// RWF_NOWAIT for buffered reads) by os.File.ReadAt, a blocking pread(2)
// the scheduler knows of.
//
// Why: a read of 256 KiB out of the page cache takes some 50 µs, longer
// than the scheduler's monitor (sysmon) takes to see a goroutine in a
// system call; it then hands the goroutine's P to another thread, which
// wakes (futex), finds nothing to do and sleeps again, and the monitor
// stays at its shortest sleep (20 µs) since it had work. With one CPU
// (validate --shards 1 under taskset) each of those is a context switch
// on the reader's core: 788 reads of a 202 MB frame file made some 1 300
// of them (a process that reads nothing makes 160) and cost 10-15 ms of
// CPU of 120. A raw call holds the P for the 50 µs of the copy, which is
// all the goroutine would do with it; a read that would wait for the disk
// is never made raw, so that the P is never held across an I/O wait.
type fileReader struct {
	f *os.File
	// raw is the file's raw connection, nil once a raw read was refused
	// for a reason other than a page not cached (then for good).
	raw syscall.RawConn
	// The raw read's arguments and results (rawRead's, a method value
	// made once: no closure allocated a read).
	b     []byte
	off   int64
	n     int
	errno syscall.Errno
	call  func(fd uintptr)
	// raws and waits count the reads made raw and by ReadAt (tests).
	raws, waits int
}

func newFileReader(f *os.File) *fileReader {
	r := &fileReader{f: f}
	if rawReads {
		if rc, err := f.SyscallConn(); err == nil {
			r.raw = rc
			r.call = r.rawRead
		}
	}
	return r
}

// read reads into b from offset off. Unlike io.ReaderAt it may return
// fewer bytes than len(b) with a nil error (what the page cache held);
// io.EOF (with n < len(b)) says the file ends before off+len(b).
func (r *fileReader) read(b []byte, off int64) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if r.raw != nil {
		if n, ok := r.cached(b, off); ok {
			if n == 0 {
				return 0, io.EOF
			}
			r.raws++
			return n, nil
		}
	}
	r.waits++
	return r.f.ReadAt(b, off)
}

// cached makes one raw read; ok is false when it read nothing because it
// would have waited (or cannot be made: then never again for this file).
func (r *fileReader) cached(b []byte, off int64) (n int, ok bool) {
	// Control, not Read: it holds a reference to the descriptor as
	// ReadAt does, not its read lock, so that the readers of a split
	// (one each) read the file at once.
	r.b, r.off = b, off
	err := r.raw.Control(r.call)
	r.b = nil
	if err != nil {
		r.raw = nil
		return 0, false
	}
	switch r.errno {
	case 0:
		return r.n, true
	case syscall.EAGAIN:
		return 0, false
	}
	r.raw = nil // EOPNOTSUPP, ENOSYS, EINVAL, or an I/O error ReadAt reports
	return 0, false
}
