package validate

import (
	"math"
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
// collected (a cleanup, table.track) and when it replaces a piece; no
// slice of it may outlive the table or the piece (keys are copied into
// findings and stream infos, never kept; pointers from table.at are used
// only until the next insert or remove).

// offHeap is what the stream tables of the process have mapped, in bytes.
var offHeap atomic.Int64

// TableBytes is what the stream tables of the process hold now (mapped
// off the heap, or, where mmap is not available, allocated on it).
func TableBytes() int64 { return offHeap.Load() }

// limitGuard keeps the Go runtime's soft memory limit (GOMEMLIMIT, or what
// e2atap run derived from the container's limit) honest: the collector
// does not see the tables, so the limit it works to is the process's limit
// less what the tables hold (ChargeTablesToMemoryLimit).
var limitGuard struct {
	mu   sync.Mutex
	on   bool
	base int64 // the limit when charging started
	set  int64 // the limit last set
}

// ChargeTablesToMemoryLimit makes the Go runtime's memory limit, if one is
// set, count the stream tables: from now on it is the limit as it is now
// less TableBytes (at least a quarter of it), updated as the tables map
// and unmap memory. Call it after the limit is set (e2atap run sets it from
// the container's limit); a limit set by someone else later becomes the
// new base (lifted: charging stops). The returned function stops it and
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
			return
		}
		limitGuard.base, limitGuard.set = cur, cur
	}
	want := max(limitGuard.base-offHeap.Load(), limitGuard.base/4)
	if d := want - limitGuard.set; d > limitStep || d < -limitStep {
		debug.SetMemoryLimit(want)
		limitGuard.set = want
	}
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
	pieces map[*byte]int // first byte → length
	held   atomic.Int64  // bytes mapped now (read by tests from another goroutine)
}

func (m *tableMem) alloc(n int) []byte {
	b := mapBytes(n)
	if m.pieces == nil {
		m.pieces = map[*byte]int{}
	}
	m.pieces[&b[0]] = n
	m.held.Add(int64(n))
	mapped(n)
	return b
}

// free unmaps a piece alloc returned (b may be resliced, not moved).
func (m *tableMem) free(b []byte) {
	b = b[:cap(b)]
	n, ok := m.pieces[&b[0]]
	if !ok {
		return
	}
	delete(m.pieces, &b[0])
	unmapBytes(b[:n])
	m.held.Add(-int64(n))
	mapped(-n)
}

func (m *tableMem) freeAll() {
	for p, n := range m.pieces {
		unmapBytes(unsafeBytes(p, n))
		m.held.Add(-int64(n))
		mapped(-n)
	}
	m.pieces = nil
}
