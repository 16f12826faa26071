//go:build !amd64

package validate

// prefetch is a hint only: nothing where there is no kernel for it.
func prefetch(uintptr) {}

// prefetchFrames is a hint only, as prefetch.
func prefetchFrames(uintptr, *chunkFrame, int) {}
