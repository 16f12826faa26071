package demo

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/e2atap/e2atap/validate"
)

// maxKept bounds the findings a Collector keeps for matching; beyond it
// they are counted only.
const maxKept = 1 << 20

// Collector is a validate.Sink that keeps what the live view and the
// summary need: records and open streams per tap, and the findings. Safe
// for concurrent use (the shards of a live run call it in parallel).
type Collector struct {
	records atomic.Uint64

	mu       sync.Mutex
	perTap   map[string]uint64
	open     map[string]int
	findings []validate.Finding
	byRule   map[string]int
	byTap    map[string]int
	dropped  int
}

var _ validate.Sink = (*Collector)(nil)

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{perTap: map[string]uint64{}, open: map[string]int{}, byRule: map[string]int{}, byTap: map[string]int{}}
}

// Record counts a record.
func (c *Collector) Record(r *validate.RecordInfo) {
	c.records.Add(1)
	c.mu.Lock()
	c.perTap[r.In.Tap]++
	c.mu.Unlock()
}

// Finding keeps a finding.
func (c *Collector) Finding(f *validate.Finding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byRule[f.Rule]++
	c.byTap[f.Tap]++
	if len(c.findings) >= maxKept {
		c.dropped++
		return
	}
	c.findings = append(c.findings, *f)
}

// StreamStart counts an open stream.
func (c *Collector) StreamStart(s *validate.StreamInfo) {
	c.mu.Lock()
	c.open[s.Tap]++
	c.mu.Unlock()
}

// StreamEnd counts a stream closed.
func (c *Collector) StreamEnd(s *validate.StreamInfo) {
	c.mu.Lock()
	c.open[s.Tap]--
	c.mu.Unlock()
}

// Records returns the records seen so far.
func (c *Collector) Records() uint64 { return c.records.Load() }

// Findings returns a copy of the findings so far, in arrival order.
func (c *Collector) Findings() []validate.Finding {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]validate.Finding(nil), c.findings...)
}

// Stats is a snapshot for the live view.
type Stats struct {
	Records       uint64
	RecordsPerTap map[string]uint64
	Open          map[string]int
	ByRule        map[string]int
	ByTap         map[string]int // findings per tap
	Findings      int
	Last          []validate.Finding // the most recent, newest last
}

// Snapshot returns the counters and the last n findings.
func (c *Collector) Snapshot(n int) Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Stats{Records: c.records.Load(), RecordsPerTap: map[string]uint64{}, Open: map[string]int{}, ByRule: map[string]int{}, ByTap: map[string]int{}}
	for k, v := range c.perTap {
		s.RecordsPerTap[k] = v
	}
	for k, v := range c.open {
		s.Open[k] = v
	}
	for k, v := range c.byRule {
		s.ByRule[k] = v
		s.Findings += v
	}
	for k, v := range c.byTap {
		s.ByTap[k] = v
	}
	if len(c.findings) > n {
		s.Last = append(s.Last, c.findings[len(c.findings)-n:]...)
	} else {
		s.Last = append(s.Last, c.findings...)
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
