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

// TestTableGivesBackTheTailKey: a key removed while it ends the arena (the
// latest stored) gives its bytes back to the next key, as a frame file's
// streams do that end one after another in a partition; one removed from
// before the tail stays dead until a compaction.
func TestTableGivesBackTheTailKey(t *testing.T) {
	tab := newTable(0)
	key := func(i int) []byte {
		return fmt.Appendf(nil, "tap\x00conn\x00agent-7:%08d-0000-4000-8000-000000000000", i)
	}
	keep := key(-1)
	tab.insert(keep, tab.hash(keep))
	for i := 0; i < 100_000; i++ {
		k := key(i)
		j := tab.insert(k, tab.hash(k))
		if got := tab.find(k, tab.hash(k)); got != j || string(tab.key(j)) != string(k) {
			t.Fatalf("key %d: inserted at %d, found at %d (%q)", i, j, got, tab.key(got))
		}
		tab.remove(j)
	}
	if len(tab.arena) != 1 || len(tab.arena[0]) != 1+len(keep) || tab.dead != 0 {
		t.Fatalf("arena after 100 000 streams one at a time: %d chunks, %d bytes in the last, %d dead; want 1, %d, 0",
			len(tab.arena), len(tab.arena[len(tab.arena)-1]), tab.dead, 1+len(keep))
	}
	if j := tab.find(keep, tab.hash(keep)); j < 0 || string(tab.key(j)) != string(keep) {
		t.Fatalf("the first key lost: %d", j)
	}
	// Not the tail: dead bytes, the tail stays.
	a, b := key(1), key(2)
	tab.insert(a, tab.hash(a))
	tab.insert(b, tab.hash(b))
	tab.remove(tab.find(a, tab.hash(a)))
	if tab.dead != 1+len(a) || len(tab.arena[0]) != 3+len(keep)+len(a)+len(b) {
		t.Fatalf("a key before the tail removed: %d dead, arena %d bytes", tab.dead, len(tab.arena[0]))
	}
	if j := tab.find(b, tab.hash(b)); j < 0 || string(tab.key(j)) != string(b) {
		t.Fatalf("the tail key lost: %d", j)
	}
}
