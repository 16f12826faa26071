package validate

// prefetch asks for the cache line of p ahead of its use (a hint: nothing
// waits for it, and an address past what is mapped does not fault).
func prefetch(p uintptr)
