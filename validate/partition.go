package validate

import (
	"encoding/binary"
	"math/bits"
	"runtime"
	"unsafe"
)

// Partitions make the limits global and the verdicts independent of the
// number of shards. Every stream key (request_id, sid, event id) belongs to
// one of a fixed number of partitions, chosen by a hash with a fixed seed;
// each partition has its own stream table, bound (its share of
// Config.MaxStreams), tombstones (its share of Config.Tombstones) and
// eviction order. A shard owns whole partitions (partition mod shards), so a
// partition sees the same records in the same order whatever the number of
// shards or cores, and so evicts the same streams: the findings and
// outcomes are the same for --shards 1, 2, 4 or 8, and the sum of the
// partitions' bounds is MaxStreams.
//
// The number of partitions depends only on MaxStreams: one per 16384
// streams of the bound, at most MaxPartitions. Large partitions fill
// evenly and waste little: streams hash evenly over partitions, so a
// partition fills at about the same time as the whole, and one that fills
// first evicts within itself; with uniform keys and the default bound (1 M,
// 61 partitions of 16393) the first eviction comes at about 98 % of the
// bound (the fullest partition is some 2.4 standard deviations above its
// mean): the price of verdicts that do not depend on the shards. Each
// partition also has its own partly used key chunk and state segment
// (about 100 KiB), which is why there are not more of them. The seed is fixed so that two runs (or a run and its
// replay) agree: a sender that crafts request_ids to crowd one partition
// only gets that partition's own streams evicted earlier, never more than
// MaxStreams held.

// MaxPartitions is the most partitions (and so the most useful shards).
const MaxPartitions = 256

// partitionStreams is the least share of MaxStreams a partition gets (a
// variable so that tests can have many partitions with few streams).
var partitionStreams = 16384

// partitions returns the number of partitions for a stream bound.
func partitions(maxStreams int) int {
	return max(1, min(MaxPartitions, maxStreams/partitionStreams))
}

// partShare is partition p's share of total over n partitions: the shares
// add up to total.
func partShare(total, n, p int) int {
	s := total / n
	if p < total%n {
		s++
	}
	return s
}

// partitionOf maps a stream key to its partition in [0, n): a fixed-seed
// hash, the same in every process, reduced by a multiply (no division).
// A walk (walk.go) computes it for every record on every shard.
func partitionOf(key []byte, n int) int {
	if n <= 1 {
		return 0
	}
	return int(uint64(uint32(fixedHash(key)>>32)) * uint64(n) >> 32)
}

// fixedHash is a fast 64-bit hash with a fixed seed (8 bytes a step,
// multiply-fold mixing; the last 1 to 8 bytes read as two overlapping
// words, not a byte at a time). Two steps a turn, read in place without a
// bounds check each: 131 -> 104 instructions for a 44-byte key
// (cachegrind), the same hash (TestFixedHashSteps).
func fixedHash(b []byte) uint64 {
	const (
		k0 = 0xa0761d6478bd642f
		k1 = 0xe7037ed1a0b428db
	)
	n := len(b)
	h := uint64(n) ^ k0
	p := unsafe.Pointer(unsafe.SliceData(b))
	r := n // bytes left at p
	for ; r > 16; r -= 16 {
		hi, lo := bits.Mul64(le64(p)^k1, h^k0)
		h = hi ^ lo
		hi, lo = bits.Mul64(le64(unsafe.Add(p, 8))^k1, h^k0)
		h = hi ^ lo
		p = unsafe.Add(p, 16)
	}
	if r > 8 {
		hi, lo := bits.Mul64(le64(p)^k1, h^k0)
		h = hi ^ lo
		p = unsafe.Add(p, 8)
		r -= 8
	}
	var t uint64
	switch {
	case r == 8:
		t = le64(p)
	case r >= 4:
		t = le32(p) | le32(unsafe.Add(p, r-4))<<32
	case r > 0:
		t = uint64(*(*byte)(p)) | uint64(*(*byte)(unsafe.Add(p, r/2)))<<8 | uint64(*(*byte)(unsafe.Add(p, r-1)))<<16
	}
	hi, lo := bits.Mul64(t^k1, h^k0)
	hi, lo = bits.Mul64(hi^lo^k1, uint64(n)^k0)
	return hi ^ lo
}

// le64 and le32 read the little-endian word at p.
func le64(p unsafe.Pointer) uint64 { return binary.LittleEndian.Uint64((*[8]byte)(p)[:]) }
func le32(p unsafe.Pointer) uint64 { return uint64(binary.LittleEndian.Uint32((*[4]byte)(p)[:])) }

// MaxShards is the most shards a run starts: 4 per available CPU
// (GOMAXPROCS) and at most MaxPartitions. More would only hold memory
// (each shard has its own queue of batches) without using a core more.
func MaxShards() int { return min(MaxPartitions, 4*runtime.GOMAXPROCS(0)) }

// ShardsFor bounds a requested number of shards: at least 1, at most
// MaxShards and at most the number of partitions of the stream bound (one
// per 16384 streams of it: a shard with no partition would have nothing to
// do). capped says the
// request was lowered.
func ShardsFor(requested, maxStreams int) (n int, capped bool) {
	n = max(1, requested)
	limit := min(MaxShards(), partitions(min(max(maxStreams, 1), MaxTableStreams)))
	if n > limit {
		return limit, true
	}
	return n, false
}

// part is the stream state of one partition.
type part struct {
	tab   *table
	tombs tombSet
	rnd   uint64 // eviction sampling
	max   int    // this partition's share of MaxStreams
	id    uint8
}
