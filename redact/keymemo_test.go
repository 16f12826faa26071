package redact

import (
	"fmt"
	"hash/maphash"
	"testing"
)

// TestKeyMemoTwoWays: two keys whose hashes pick the same set are both
// held (a tool's two hot keys no longer evict each other on every record),
// a third in that set keeps the memo right (a held key is answered, a key
// never added is not), and runs longer than keyMemoMax are never held.
func TestKeyMemoTwoWays(t *testing.T) {
	for round := 0; round < 20; round++ {
		m := &keyMemo{seed: maphash.MakeSeed()}
		sets := len(m.sets)
		bySet := map[uint64][]string{}
		var same []string
		for i := 0; len(same) < 3; i++ {
			k := fmt.Sprintf("key_%d", i)
			s := maphash.String(m.seed, k) & uint64(sets-1)
			bySet[s] = append(bySet[s], k)
			if len(bySet[s]) == 3 {
				same = bySet[s]
			}
		}
		a, b, c := same[0], same[1], same[2]
		m.add([]byte(a))
		m.add([]byte(b))
		if !m.has([]byte(a)) || !m.has([]byte(b)) {
			t.Fatalf("round %d: %q and %q share a set: has = %v, %v, want both held", round, a, b, m.has([]byte(a)), m.has([]byte(b)))
		}
		if m.has([]byte(c)) {
			t.Fatalf("round %d: %q was never added but is held", round, c)
		}
		m.add([]byte(c))
		if !m.has([]byte(c)) {
			t.Fatalf("round %d: %q, just added, is not held", round, c)
		}
		if m.has([]byte(a)) == m.has([]byte(b)) {
			t.Fatalf("round %d: a third key in a full set evicts exactly one of the two: has(%q) = has(%q) = %v", round, a, b, m.has([]byte(a)))
		}
	}
	m := &keyMemo{seed: maphash.MakeSeed()}
	long := []byte("a_key_name_longer_than_the_memo_holds_at_all")
	m.add(long)
	if m.has(long) {
		t.Fatalf("a %d-byte run is held; keyMemoMax is %d", len(long), keyMemoMax)
	}
}
