package validate

// prefetch asks for the cache line of p ahead of its use (a hint: nothing
// waits for it, and an address past what is mapped does not fault).
func prefetch(p uintptr)

// prefetchFrames asks for the first line and the last line of the
// attribute section of each of the n frames at list (frames of a chunk
// read at base): one call for a batch of a split's frames, where a call
// of prefetch a line cost the judge's loop the registers it spills and
// reloads around each (some 40 instructions a frame, cachegrind).
//
//go:noescape
func prefetchFrames(base uintptr, list *chunkFrame, n int)
