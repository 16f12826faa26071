package validate

import (
	"sync"
)

// collector is a Sink that keeps everything, for tests.
type collector struct {
	mu       sync.Mutex
	findings []Finding
	records  []string // kind/status per record
	starts   []StreamInfo
	ends     []StreamInfo
}

func (c *collector) Record(r *RecordInfo) {
	c.mu.Lock()
	c.records = append(c.records, r.Kind+"/"+r.Status)
	c.mu.Unlock()
}

func (c *collector) Finding(f *Finding) {
	c.mu.Lock()
	c.findings = append(c.findings, *f)
	c.mu.Unlock()
}

func (c *collector) StreamStart(s *StreamInfo) {
	c.mu.Lock()
	c.starts = append(c.starts, *s)
	c.mu.Unlock()
}

func (c *collector) StreamEnd(s *StreamInfo) {
	c.mu.Lock()
	c.ends = append(c.ends, *s)
	c.mu.Unlock()
}
