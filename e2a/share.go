package e2a

// ShareCaches makes r scan with src's memories of earlier records (the
// keys seen in order and the texts that passed the credential pre-check),
// so that records scanned one after another into different Records (a
// batch of them, kept for a later reader) find what a single reused Record
// would have found: a Record's first Scan otherwise starts cold, and a
// record whose keys were never seen is walked for secrets again. Only the
// memories are shared, never a value (Str aliases the input or r's own
// scratch). Records that share caches must be scanned from one goroutine
// at a time; reading a scanned Record (Get, Sub, MayHoldSecret, RawDelta)
// needs no cache, so another goroutine may read it while the owner of the
// caches scans the next.
func (r *Record) ShareCaches(src *Record) {
	if src.memo == nil {
		src.memo = new(keyMemos)
	}
	if src.clean == nil {
		src.clean = new(cleanTexts)
	}
	r.memo, r.clean = src.memo, src.clean
}
