package validate

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// The stream tables live off the Go heap. They are most of the memory of
// a process that holds many open streams, long-lived and pointer-free
// (slot arrays, state segments, key chunks, in large pieces), so the
// collector gains nothing from managing them and costs a lot: with
// GOGC=100 every live heap byte gets a byte of headroom, and the runtime
// keeps another tenth of the goal mapped, so a table in the heap costs
// 2.2 times its size in RSS. Mapped with mmap (offheap_unix.go) a table
// costs what it has touched: a state segment or key chunk mapped whole is
// paid page by page as it fills, and what the table gives back (a slot
// array after growth, a segment as it shrinks, a key chunk after
// compaction) is unmapped at once, not at the next collection.
//
// The price is manual lifetime: a table unmaps its memory when it is
// collected (a cleanup, newTable) and when it replaces a piece; no
// slice of it may outlive the table or the piece (keys are copied into
// findings and stream infos, never kept; pointers from table.at are used
// only until the next insert or remove). A use after that is a fault, not
// a stale read: E2ATAP_OFFHEAP_POISON=1 (read once) makes every piece
// given back inaccessible instead of unmapped, so that such a use faults
// at once and always, in tests and fuzzing (make test sets it for this
// package).
//
// The other price is that a mapping can fail (address space under ulimit
// -v, vm.max_map_count, strict overcommit), and the tables also have a
// ceiling of their own when a Go memory limit is charged (tableCeiling).
// A piece that cannot be had is never a panic, and never the Go heap in
// its stead (an allocation the runtime cannot satisfy is fatal; after a
// refused mapping the tables also leave some address space to the
// runtime: mapCeiling): alloc
// returns nil, and the table works with what it has: a slot array that
// cannot grow fills further, a partition that cannot take a stream evicts
// its stalest one, and a stream that still finds no room is not tracked
// (Stats.Untracked: a loss, gapped like an eviction).

// offHeap is what the stream tables of the process have mapped, in bytes;
// onHeap what they hold on the Go heap (where mmap is not available, and
// the first slot array of a table whose mapping failed).
var offHeap, onHeap atomic.Int64

// allocFailures counts the pieces the tables could not get.
var allocFailures atomic.Uint64

// TableBytes is what the stream tables of the process hold now (mapped
// off the heap, or, where mmap is not available, allocated on it).
func TableBytes() int64 { return offHeap.Load() + onHeap.Load() }

// TableAllocFailures is how many times the stream tables could not get
// memory (a failed mmap, or the ceiling under a charged memory limit).
func TableAllocFailures() uint64 { return allocFailures.Load() }

// limitGuard keeps the Go runtime's soft memory limit (GOMEMLIMIT, or what
// e2atap run derived from the container's limit) honest: the collector
// does not see the tables, so the limit it works to is the process's limit
// less what the tables hold (ChargeTablesToMemoryLimit).
var limitGuard struct {
	mu   sync.Mutex
	on   bool
	base int64 // the limit when charging started
	set  int64 // the limit last set
	// ceiling is what the tables may map (0: no ceiling): the base less
	// the share kept for the Go heap.
	ceiling atomic.Int64
}

// heapShare is the part of the memory limit kept for the Go heap when the
// tables are charged to it (1/heapShare): the tables never take more than
// the rest. It is at least the byte budget e2atap run derives (a quarter
// of the container's limit, the Go limit being 90% of it) and the Go
// runtime's own needs, so that a table that grows never starves the heap
// into a collector death spiral: past it the tables evict (Stats.Evicted,
// Stats.Untracked) instead.
const heapShare = 2

// ChargeTablesToMemoryLimit makes the Go runtime's memory limit, if one is
// set, count the stream tables: from now on it is the limit as it is now
// less TableBytes, updated as the tables map and unmap memory. The tables
// may then hold at most half of the limit (the Go heap keeps the other
// half, so the limit never falls below it): past that they evict rather
// than grow. Call it after the limit is set (e2atap run sets it from the
// container's limit); a limit set by someone else later becomes the new
// base (lifted: charging stops). The returned function stops it and
// restores the limit.
func ChargeTablesToMemoryLimit() (stop func()) {
	limitGuard.mu.Lock()
	defer limitGuard.mu.Unlock()
	base := debug.SetMemoryLimit(-1)
	if limitGuard.on || base <= 0 || base == math.MaxInt64 {
		return func() {}
	}
	limitGuard.on, limitGuard.base, limitGuard.set = true, base, base
	chargeLocked()
	return func() {
		limitGuard.mu.Lock()
		defer limitGuard.mu.Unlock()
		if limitGuard.on {
			limitGuard.on = false
			limitGuard.ceiling.Store(0)
			debug.SetMemoryLimit(limitGuard.base)
		}
	}
}

// limitStep: the limit is updated when it is off by more than this.
const limitStep = 4 << 20

func chargeLocked() {
	if cur := debug.SetMemoryLimit(-1); cur != limitGuard.set {
		// Someone else set the limit since: it is the new base (and
		// charging stops if it was lifted).
		if cur <= 0 || cur == math.MaxInt64 {
			limitGuard.on = false
			limitGuard.ceiling.Store(0)
			return
		}
		limitGuard.base, limitGuard.set = cur, cur
	}
	floor := limitGuard.base / heapShare
	limitGuard.ceiling.Store(max(limitGuard.base-floor, 1))
	// The ceiling is enforced at alloc, but a compaction may pass it for
	// a moment: the floor holds whatever the tables map.
	want := max(limitGuard.base-offHeap.Load(), floor)
	if d := want - limitGuard.set; d > limitStep || d < -limitStep {
		debug.SetMemoryLimit(want)
		limitGuard.set = want
	}
}

// mapCeiling, once a mapping failed (0 before), is what the tables may
// map from then on: what they held then less mapReserve, so that the
// address space the tables would otherwise fill to the last page is left
// to the Go runtime (whose own allocations failing is fatal) as the
// tables shrink. It only comes down.
var mapCeiling atomic.Int64

// mapReserve is what the tables leave to the rest of the process after a
// mapping failed (at most a quarter of what they held).
const mapReserve = 32 << 20

func lowerMapCeiling() {
	held := offHeap.Load()
	c := max(held-min(mapReserve, held/4), 1)
	for {
		cur := mapCeiling.Load()
		if cur != 0 && cur <= c || mapCeiling.CompareAndSwap(cur, c) {
			return
		}
	}
}

// testCeiling, when set, is a ceiling on what the tables map; failMaps
// fails every mapping, as a kernel out of address space would (tests).
var (
	testCeiling atomic.Int64
	failMaps    atomic.Bool
)

// mayMap says whether the tables may map n bytes more (a transient piece
// is held only by the tables' own ceilings: mapCeiling is the process's).
func mayMap(n int, transient bool) bool {
	if c := mapCeiling.Load(); c > 0 && offHeap.Load()+int64(n) > c {
		return false
	}
	if transient {
		return true
	}
	for _, c := range [...]int64{limitGuard.ceiling.Load(), testCeiling.Load()} {
		if c > 0 && offHeap.Load()+int64(n) > c {
			return false
		}
	}
	return true
}

// mapped counts n bytes mapped (negative: unmapped) and recharges the
// memory limit.
func mapped(n int) {
	offHeap.Add(int64(n))
	limitGuard.mu.Lock()
	if limitGuard.on {
		chargeLocked()
	}
	limitGuard.mu.Unlock()
}

// tableMem is every piece a table has mapped, so that a cleanup can unmap
// them once the table is collected (it must not refer to the table).
type tableMem struct {
	pieces map[*byte]piece // first byte → length, where from
	held   atomic.Int64    // bytes held now (read by tests from another goroutine)
}

type piece struct {
	n      int
	mapped bool // else on the Go heap (only where mmap is not available)
}

// alloc returns n zeroed bytes, or nil when they cannot be had (the caller
// works without them). A transient piece (a compaction's new arena, which
// frees the old one at once) may pass the ceiling.
func (m *tableMem) alloc(n int, transient bool) []byte {
	if !mayMap(n, transient) {
		allocFailures.Add(1)
		return nil
	}
	var b []byte
	isMapped := false
	if !failMaps.Load() {
		if b, isMapped = mapBytes(n); b == nil {
			lowerMapCeiling() // the kernel refused: the address space is full
		}
	}
	if b == nil {
		allocFailures.Add(1)
		return nil
	}
	if m.pieces == nil {
		m.pieces = map[*byte]piece{}
	}
	m.pieces[&b[0]] = piece{n: n, mapped: isMapped}
	m.held.Add(int64(n))
	if isMapped {
		mapped(n)
	} else {
		onHeap.Add(int64(n))
	}
	return b
}

// free gives back a piece alloc returned (b may be resliced, not moved);
// a slice alloc did not return is left alone.
func (m *tableMem) free(b []byte) {
	if cap(b) == 0 {
		return
	}
	b = b[:cap(b)]
	p, ok := m.pieces[&b[0]]
	if !ok {
		return
	}
	delete(m.pieces, &b[0])
	m.release(b[:p.n], p)
}

func (m *tableMem) release(b []byte, p piece) {
	m.held.Add(-int64(p.n))
	if p.mapped {
		unmapBytes(b)
		mapped(-p.n)
	} else {
		onHeap.Add(-int64(p.n))
	}
}

func (m *tableMem) freeAll() {
	for first, p := range m.pieces {
		m.release(unsafeBytes(first, p.n), p)
	}
	m.pieces = nil
}

// PoisonEnv names the debug mode in which a piece of a table given back is
// made inaccessible (PROT_NONE) instead of unmapped, and not mapped again
// while it is among the last few thousand: a use after it faults at once.
const PoisonEnv = "E2ATAP_OFFHEAP_POISON"

var (
	poisonOnce sync.Once
	poison     atomic.Bool
)

// poisonOn says whether the poison mode is on: PoisonEnv=1 when first
// asked (tests may then set poison).
func poisonOn() bool {
	poisonOnce.Do(func() {
		if os.Getenv(PoisonEnv) == "1" {
			poison.Store(true)
		}
	})
	return poison.Load()
}
