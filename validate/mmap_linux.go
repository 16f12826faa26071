package validate

import "syscall"

// adviseSequential tells the kernel that b is read once, front to back:
// it reads ahead more and drops the pages behind sooner.
func adviseSequential(b []byte) { _ = syscall.Madvise(b, syscall.MADV_SEQUENTIAL) }
