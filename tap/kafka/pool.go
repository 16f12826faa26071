package kafkatap

import (
	"math/bits"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// decompressPool gives the client the buffers it decompresses record
// batches into, and takes them back once every record of a batch is
// recycled (kgo.Record.Recycle: the engine is done with it, tap.Message's
// Recycle). Without it each batch (about a MiB of JSON for a 70 KB
// snappy batch) was a fresh allocation: zeroed, often new pages from the
// kernel, cold in the cache while decoded into, and collected a moment
// later. A catch-up spent more CPU on that than on the decoding itself
// (s2.Decode into a fresh MiB: 1.2 GB/s; into a reused one: 3.1 GB/s).
//
// The buffers are kept in sync.Pools by size class (eighths of a power of
// two, at least poolMin): idle, the collector takes them back.
type decompressPool struct {
	classes [poolClasses]sync.Pool
}

var _ kgo.PoolDecompressBytes = (*decompressPool)(nil)

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
func (p *decompressPool) GetDecompressBytes(src []byte, codec kgo.CompressionCodecType) []byte {
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
func (p *decompressPool) PutDecompressBytes(b []byte) {
	class, ok := classFor(cap(b))
	if !ok {
		return
	}
	b = b[:0]
	p.classes[class].Put(&b)
}
