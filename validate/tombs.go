package validate

// tombSet remembers streams that ended, by the 64-bit hash of their key,
// for after_final / after_done (and to keep late records of cancelled
// streams silent): 8 bytes of ring and a map entry each, instead of a
// stream's state. The oldest is forgotten first when the ring is full.
type tombSet struct {
	ring []uint64
	pos  int
	m    map[uint64]uint32 // hash → times in the ring (low 30 bits) | cancelled (bit 31) | evicted (bit 30)
	// forgotEvicted: the tombstone of an evicted stream was forgotten (the
	// ring was full), so that a record of a stream not in the table may
	// be one whose start the table held and lost: its first sequence is
	// then not judged (no seq_start: a loss is never a finding).
	forgotEvicted bool
}

const (
	tombCancelled = 1 << 31
	tombEvicted   = 1 << 30
	tombFlags     = tombCancelled | tombEvicted
)

func newTombSet(n int) tombSet {
	return tombSet{ring: make([]uint64, n), m: make(map[uint64]uint32, min(n, 1<<16))}
}

// add remembers the end of the stream of hash h; how is ended, cancelled
// or evicted.
func (t *tombSet) add(h uint64, how int) {
	if old := t.ring[t.pos]; old != 0 {
		if v, ok := t.m[old]; ok {
			if v&^tombFlags <= 1 {
				if v&tombEvicted != 0 {
					t.forgotEvicted = true
				}
				delete(t.m, old)
			} else {
				t.m[old] = v - 1
			}
		}
	}
	if h == 0 {
		h = 1
	}
	t.ring[t.pos] = h
	t.pos = (t.pos + 1) % len(t.ring)
	v := t.m[h]&^tombFlags + 1
	switch how {
	case cancelled:
		v |= tombCancelled
	case evicted:
		v |= tombEvicted
	}
	t.m[h] = v
}

// state says whether the stream of hash h ended, and how.
func (t *tombSet) state(h uint64) int {
	if h == 0 {
		h = 1
	}
	v, ok := t.m[h]
	switch {
	case !ok:
		return notEnded
	case v&tombCancelled != 0:
		return cancelled
	case v&tombEvicted != 0:
		return evicted
	}
	return ended
}

// drop forgets h (a new request reuses a finished id).
func (t *tombSet) drop(h uint64) {
	if h == 0 {
		h = 1
	}
	delete(t.m, h)
}
