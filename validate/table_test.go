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

// TestTableGrowsToHint: a table starts with minSlots, doubles up to its
// hint's size (the hint's streams at a load of 3/4), then grows by a
// quarter; every key is found at every size.
func TestTableGrowsToHint(t *testing.T) {
	tab := newTable(1000)
	if len(tab.slots) != minSlots {
		t.Fatalf("a new table has %d slots, want %d", len(tab.slots), minSlots)
	}
	want := []int{minSlots}
	for n := minSlots; n < 1000*4/3+1; {
		n = min(2*n, 1000*4/3+1)
		want = append(want, n)
	}
	want = append(want, want[len(want)-1]+want[len(want)-1]/4)
	sizes := []int{len(tab.slots)}
	var keys [][]byte
	for k := 0; len(sizes) < len(want); k++ {
		key := fmt.Appendf(nil, "agent-7:%08d-0000-4000-8000-000000000000", k)
		if i := tab.insert(key, tab.hash(key)); i != int32(k) {
			t.Fatalf("insert %d: %d", k, i)
		}
		keys = append(keys, key)
		if len(tab.slots) != sizes[len(sizes)-1] {
			sizes = append(sizes, len(tab.slots))
			for j, key := range keys {
				if i := tab.find(key, tab.hash(key)); i != int32(j) {
					t.Fatalf("%d slots: key %d found at %d", len(tab.slots), j, i)
				}
			}
		}
	}
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Fatalf("slot array sizes %v, want %v", sizes, want)
	}
}
