package validate

import (
	"encoding/binary"
	"math/bits"
	"runtime"
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
// words, not a byte at a time).
func fixedHash(b []byte) uint64 {
	const (
		k0 = 0xa0761d6478bd642f
		k1 = 0xe7037ed1a0b428db
	)
	n := len(b)
	h := uint64(n) ^ k0
	for len(b) > 8 {
		hi, lo := bits.Mul64(binary.LittleEndian.Uint64(b)^k1, h^k0)
		h = hi ^ lo
		b = b[8:]
	}
	var t uint64
	switch m := len(b); {
	case m == 8:
		t = binary.LittleEndian.Uint64(b)
	case m >= 4:
		t = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[m-4:]))<<32
	case m > 0:
		t = uint64(b[0]) | uint64(b[m/2])<<8 | uint64(b[m-1])<<16
	}
	hi, lo := bits.Mul64(t^k1, h^k0)
	hi, lo = bits.Mul64(hi^lo^k1, uint64(n)^k0)
	return hi ^ lo
}

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
