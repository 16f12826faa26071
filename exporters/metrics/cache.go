package metrics

import (
	"strings"
	"sync"
	"sync/atomic"
)

// cowMap is a read-mostly map: lookups are an atomic load and a map index
// with no lock (so no contention between shards); inserts copy the map under
// mu. It suits the label caches, whose keys are few and settle quickly.
type cowMap[K comparable, V any] struct {
	p  atomic.Pointer[map[K]V]
	mu sync.Mutex
}

func (c *cowMap[K, V]) load(k K) (V, bool) {
	if m := c.p.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// loadOrCreate returns the value for k, calling create under the lock when
// it is missing. The value is cached only while the map holds fewer than max
// entries: past that, create is called on every miss (slow but bounded).
func (c *cowMap[K, V]) loadOrCreate(k K, max int, create func() V) V {
	if v, ok := c.load(k); ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.p.Load()
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v
		}
	}
	v := create()
	n := 0
	if old != nil {
		n = len(*old)
	}
	if n >= max {
		return v
	}
	m := make(map[K]V, n+1)
	if old != nil {
		for kk, vv := range *old {
			m[kk] = vv
		}
	}
	m[k] = v
	c.p.Store(&m)
	return v
}

// otherValue replaces label values beyond a label's cap.
const otherValue = "other"

// labelCap bounds the distinct values one label takes: the first max values
// seen are kept, later new ones become "other". It is consulted only when a
// new label combination is cached, never per record.
type labelCap struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newLabelCap(max int) *labelCap {
	return &labelCap{max: max, seen: make(map[string]struct{})}
}

func (l *labelCap) value(v string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[v]; ok {
		return v
	}
	if len(l.seen) >= l.max {
		return otherValue
	}
	v = strings.Clone(v) // the engine's strings may alias reused buffers
	l.seen[v] = struct{}{}
	return v
}
