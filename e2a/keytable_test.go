package e2a

import "testing"

// TestKnownKeysTop: the fused look-up of a top-level key (knownKeys.top)
// says what topKeys says, for every known key and every field key.
func TestKnownKeysTop(t *testing.T) {
	for _, k := range append(append([]string(nil), knownKeyNames...), FieldKeys[:]...) {
		h, known := knownKeys.find([]byte(k))
		if !known {
			continue
		}
		v, isTop := topKeys.lookup([]byte(k))
		got := knownKeys.slot[h].top
		if isTop && got != v+1 || !isTop && got != 0 {
			t.Errorf("%q: top %d, topKeys %d %v", k, got, v, isTop)
		}
		if knownKeys.slot[h].key != k {
			t.Errorf("%q: slot holds %q", k, knownKeys.slot[h].key)
		}
	}
}
