package kafkatap

import (
	"math/bits"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchPool gives the client the buffers it decompresses record batches
// into and the slices of kgo.Record it decodes a batch's records into, and
// takes both back once every record of the batch is recycled
// (kgo.Record.Recycle: the engine is done with it, tap.Message's Recycle).
// Without it each batch (about a MiB of JSON for a 70 KB snappy batch,
// and some 1100 records of 200 bytes) was two fresh allocations: zeroed,
// often new pages from the kernel, cold in the cache while written, and
// collected a moment later. (s2.Decode into a fresh MiB: 1.2 GB/s; into a
// reused one: 3.1 GB/s.)
//
// Both are kept in sync.Pools by size class (buffers: eighths of a power
// of two, at least 64 KiB; records: powers of two): idle, the collector
// takes them back.
type fetchPool struct {
	classes [poolClasses]sync.Pool
	records [recordClasses]sync.Pool
}

var (
	_ kgo.PoolDecompressBytes = (*fetchPool)(nil)
	_ kgo.PoolRecords         = (*fetchPool)(nil)
)

const (
	// poolMinShift: buffers are at least 64 KiB (1 << poolMinShift); a
	// batch decompressing to less takes one of those.
	poolMinShift = 16
	// poolMaxShift: the classes end below 256 MiB (1 << poolMaxShift),
	// at 240 MiB; a batch decompressing to more gets a buffer of its own
	// (the client allocates it), not a pooled one.
	poolMaxShift = 28
	// poolClasses: eight classes for each power of two in between.
	poolClasses = (poolMaxShift - poolMinShift) * 8
	// guessRatio is the decompressed size guessed for a codec whose
	// header does not say it (gzip, lz4, zstd without a content size):
	// the codec grows a buffer too small, and the grown one is pooled.
	guessRatio = 8
	// Record slices hold 1 << recordMinShift records at least, and a
	// batch of more than 1 << (recordMinShift + recordClasses - 1)
	// records (64 Ki) gets a slice of its own.
	recordMinShift = 6
	recordClasses  = 11
)

// classOf is the size class holding buffers of at least n bytes (up):
// the least class size ≥ n; ok false past the largest.
func classOf(n int) (class, size int, ok bool) {
	n = max(n, 1<<poolMinShift)
	e := bits.Len(uint(n)) - 4 // n >> e is in [8, 15]
	m := n >> e
	if m<<e < n {
		m++
	}
	if m == 16 {
		m, e = 8, e+1
	}
	class = (e-(poolMinShift-3))*8 + m - 8
	if class >= poolClasses {
		return 0, 0, false
	}
	return class, m << e, true
}

// classFor is the class a buffer of capacity c goes back to (down): the
// greatest class size ≤ c; ok false below the smallest or past the
// largest.
func classFor(c int) (class int, ok bool) {
	if c < 1<<poolMinShift {
		return 0, false
	}
	e := bits.Len(uint(c)) - 4
	class = (e-(poolMinShift-3))*8 + c>>e - 8
	return class, class < poolClasses
}

// GetDecompressBytes returns a buffer with room for src decompressed:
// exactly known for snappy (its header says it), guessed otherwise.
func (p *fetchPool) GetDecompressBytes(src []byte, codec kgo.CompressionCodecType) []byte {
	need := len(src) * guessRatio
	if codec == kgo.CodecSnappy {
		if n, err := s2.DecodedLen(src); err == nil {
			need = n // (a Java producer's framed snappy fails here: guessed)
		}
	}
	class, size, ok := classOf(need)
	if !ok {
		return nil // the client allocates it
	}
	if b, _ := p.classes[class].Get().(*[]byte); b != nil {
		return (*b)[:0]
	}
	return make([]byte, 0, size)
}

// PutDecompressBytes takes a buffer back (the client zeroed what the batch
// used).
func (p *fetchPool) PutDecompressBytes(b []byte) {
	class, ok := classFor(cap(b))
	if !ok {
		return
	}
	b = b[:0]
	p.classes[class].Put(&b)
}

// GetRecords returns a slice with room for n records (those of a batch
// decoded into it overwrite every field).
func (p *fetchPool) GetRecords(n int) []kgo.Record {
	class := max(bits.Len(uint(max(n, 1)-1)), recordMinShift) - recordMinShift
	if class >= recordClasses {
		return nil // the client allocates it
	}
	if rs, _ := p.records[class].Get().(*[]kgo.Record); rs != nil {
		return (*rs)[:0]
	}
	return make([]kgo.Record, 0, 1<<(class+recordMinShift))
}

// PutRecords takes a slice of records back (each recycled record zeroed
// by Recycle).
func (p *fetchPool) PutRecords(rs []kgo.Record) {
	class := bits.Len(uint(cap(rs))) - 1 - recordMinShift
	if class < 0 || class >= recordClasses {
		return
	}
	rs = rs[:0]
	p.records[class].Put(&rs)
}
