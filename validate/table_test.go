package validate

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestTableAgainstMap: random inserts, lookups and removals (with growth,
// backward-shift deletion, swap-removal and arena compaction) agree with a
// map.
func TestTableAgainstMap(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	tab := newTable(0)
	oracle := map[string]uint32{} // key → records, stored in the state
	keys := []string{}
	for step := 0; step < 200000; step++ {
		switch op := rnd.IntN(10); {
		case op < 6 || len(keys) == 0: // insert or update
			k := fmt.Sprintf("k-%d-%s", rnd.IntN(50000), string(make([]byte, rnd.IntN(40))))
			h := tab.hash([]byte(k))
			i := tab.find([]byte(k), h)
			if _, ok := oracle[k]; ok != (i >= 0) {
				t.Fatalf("step %d: find %q = %d, oracle has it: %v", step, k, i, ok)
			}
			if i < 0 {
				i = tab.insert([]byte(k), h)
				keys = append(keys, k)
			}
			tab.at(i).records++
			oracle[k]++
		default: // remove a random present key
			j := rnd.IntN(len(keys))
			k := keys[j]
			keys[j] = keys[len(keys)-1]
			keys = keys[:len(keys)-1]
			i := tab.find([]byte(k), tab.hash([]byte(k)))
			if i < 0 {
				t.Fatalf("step %d: %q lost", step, k)
			}
			if got := tab.at(i).records; got != oracle[k] {
				t.Fatalf("step %d: %q has %d records, want %d", step, k, got, oracle[k])
			}
			tab.remove(i)
			delete(oracle, k)
		}
		if tab.len() != len(oracle) {
			t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(oracle))
		}
	}
	for k, n := range oracle {
		i := tab.find([]byte(k), tab.hash([]byte(k)))
		if i < 0 || tab.at(i).records != n || string(tab.key(i)) != k {
			t.Fatalf("%q: index %d wrong at the end", k, i)
		}
	}
}

func TestStreamStateSize(t *testing.T) {
	if n := unsafe.Sizeof(stream{}); n != 40 {
		t.Fatalf("stream state is %d bytes, want 40 (memory per open stream is a contract)", n)
	}
}
