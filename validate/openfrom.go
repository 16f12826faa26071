package validate

import (
	"math"
	"slices"
	"sort"
	"time"
)

// What a Kafka consumer may commit (DESIGN.md, "Growing past one machine"):
// per partition, only what no open stream still needs, the offset of the
// oldest open stream's first record, so that whoever reads the partition
// next (another replica after a rebalance, this one after a crash) reads
// every open stream from its start.
//
// The engine keeps this beside its stream tables, not in them (a stream's
// state stays small, and only streams read from Kafka pay): openFrom holds,
// per tap and partition, a queue of the first offsets of the streams opened
// there, in the order they were opened, and a map from a stream to its
// entry. Within one engine a partition's records arrive in offset order, so
// the queue is sorted; an ended stream is marked in place, and the marked
// entries at the head are dropped (lazy removal), so that the head is the
// oldest open stream's first offset. Each shard's engine has its own
// openFrom, touched only by its goroutine; a live run reads them all at a
// barrier (Live.SyncOpen), when every shard is idle.

// KafkaPartition names one partition of a tap's topic, or (Topic "") one
// JetStream stream of a nats tap: Partition is then the Position.Partition
// its messages carry (1 + the stream's index in the tap). A JetStream
// stream is read in sequence order like a partition, and a nats tap that
// keeps cursors resumes at its oldest open stream's first record the same
// way (natstap.Config.Positions).
type KafkaPartition struct {
	Tap       string
	Topic     string
	Partition int32
}

// openRef names a stream by its partition of the stream state and its key's
// hash in that partition's table (the hash its tombstone is kept by).
type openRef struct {
	part uint8
	h    uint64
}

type openEntry struct {
	off    int64
	ref    openRef
	closed bool
}

// openQueue is one Kafka partition's streams in the order they opened.
type openQueue struct {
	q    []openEntry
	head int
	open int // entries not closed
	// behind: the partition's tap has not read all it holds (Hold).
	behind bool
}

type openFrom struct {
	parts   map[KafkaPartition]*openQueue
	streams map[openRef]openLoc
	behind  int // queues behind: while 0, held answers without a look-up
}

// openLoc is where an open stream's entry is: its queue and first offset.
type openLoc struct {
	q   *openQueue
	off int64
}

// opened records the first record of a stream just created in the table.
func (e *Engine) opened(h uint64, in *Input) {
	kp, ok := resumeKey(in)
	if !ok {
		return
	}
	o := e.opens
	if o == nil {
		o = &openFrom{parts: map[KafkaPartition]*openQueue{}, streams: map[openRef]openLoc{}}
		e.opens = o
	}
	q := o.parts[kp]
	if q == nil {
		q = &openQueue{}
		o.parts[kp] = q
	}
	ref := openRef{part: e.cur.id, h: h}
	if old, ok := o.streams[ref]; ok {
		old.q.close(ref, old.off) // a key reused before its end reached us: keep one entry
	}
	o.streams[ref] = openLoc{q: q, off: in.Pos.Offset}
	q.push(openEntry{off: in.Pos.Offset, ref: ref})
}

// resumeKey is the sequence a record's tap resumes in at its offset: a
// Kafka partition, or a JetStream stream (a subject's position with a
// stream sequence and the stream's Partition).
func resumeKey(in *Input) (KafkaPartition, bool) {
	switch p := &in.Pos; {
	case p.Kind == PosKafka:
		return KafkaPartition{Tap: in.Tap, Topic: p.Name, Partition: p.Partition}, true
	case p.Kind == PosSubject && p.Offset > 0 && p.Partition > 0:
		return KafkaPartition{Tap: in.Tap, Partition: p.Partition}, true
	}
	return KafkaPartition{}, false
}

// closed records that the stream of key (in the current partition of the
// stream state) ended or left the table.
func (e *Engine) closed(key []byte) {
	o := e.opens
	if o == nil || len(o.streams) == 0 {
		return
	}
	ref := openRef{part: e.cur.id, h: e.tab.hash(key)}
	if loc, ok := o.streams[ref]; ok {
		delete(o.streams, ref)
		loc.q.close(ref, loc.off)
	}
}

func (q *openQueue) push(en openEntry) {
	q.open++
	n := len(q.q)
	if n == q.head || q.q[n-1].off <= en.off {
		q.q = append(q.q, en)
		return
	}
	// Out of order (a partition read again from an older offset): keep
	// the queue sorted.
	i := q.head + sort.Search(n-q.head, func(i int) bool { return q.q[q.head+i].off > en.off })
	q.q = append(q.q, openEntry{})
	copy(q.q[i+1:], q.q[i:])
	q.q[i] = en
}

func (q *openQueue) close(ref openRef, off int64) {
	live := q.q[q.head:]
	for i := sort.Search(len(live), func(i int) bool { return live[i].off >= off }); i < len(live) && live[i].off == off; i++ {
		if en := &live[i]; !en.closed && en.ref == ref {
			en.closed = true
			q.open--
			break
		}
	}
	for q.head < len(q.q) && q.q[q.head].closed {
		q.head++
	}
	switch n := len(q.q) - q.head; {
	case n == 0:
		q.q, q.head = q.q[:0], 0
	case n > 2*q.open+closedKept:
		// A stream that stays open holds the head: the ended ones behind
		// it are kept only for Handover's tombstones, and only so many.
		live := q.q[:0]
		for _, en := range q.q[q.head:] {
			if !en.closed {
				live = append(live, en)
			}
		}
		q.q, q.head = live, 0
	case q.head > 64 && q.head > len(q.q)/2:
		q.q = append(q.q[:0], q.q[q.head:]...)
		q.head = 0
	}
}

// closedKept bounds the ended streams a queue keeps behind an open one
// (beyond twice the open ones): memory stays proportional to the open
// streams, whatever one stuck stream holds back.
const closedKept = 4096

// oldest is the first offset of the oldest open stream.
func (q *openQueue) oldest() (int64, bool) {
	if q.head < len(q.q) {
		return q.q[q.head].off, true
	}
	return 0, false
}

// openFirst adds to into, per partition of tap with open streams, the first
// offset of its oldest open stream (the lowest over the engines).
func (o *openFrom) openFirst(tap string, into map[KafkaPartition]int64) {
	if o == nil {
		return
	}
	for kp, q := range o.parts {
		if kp.Tap != tap {
			continue
		}
		if off, ok := q.oldest(); ok {
			if cur, seen := into[kp]; !seen || off < cur {
				into[kp] = off
			}
		}
	}
}

// Handover drops, with no verdict, every stream of the tap's partition
// in.Pos (Name, Partition) that its next reader reads again: those still
// open, and those that ended after the oldest open one began (their
// tombstones too, so that reading them again here later is no
// after_final). The partition went to another consumer, which reads them
// from their start (the commit waited for them).
func (e *Engine) Handover(in *Input) {
	o := e.opens
	if o == nil {
		return
	}
	kp := KafkaPartition{Tap: in.Tap, Topic: in.Pos.Name, Partition: in.Pos.Partition}
	q := o.parts[kp]
	if q == nil {
		return
	}
	delete(o.parts, kp)
	if q.behind {
		o.behind--
	}
	drop := map[openRef]bool{}
	var parts [MaxPartitions]bool
	for _, en := range q.q[q.head:] {
		if en.closed {
			e.parts[en.ref.part].tombs.drop(en.ref.h)
			continue
		}
		drop[en.ref] = true
		parts[en.ref.part] = true
		delete(o.streams, en.ref)
	}
	if len(drop) == 0 {
		return
	}
	e.forgetPending()
	for p := range e.parts {
		if !parts[p] || e.parts[p].tab == nil {
			continue
		}
		e.use(p)
		for i := int32(e.tab.len()) - 1; i >= 0; i-- {
			if i >= int32(e.tab.len()) {
				continue
			}
			if drop[openRef{part: uint8(p), h: e.tab.hash(e.tab.key(i))}] {
				e.tab.remove(i)
			}
		}
	}
}

// Hold says whether the tap's partition in.Pos (Name, Partition: as
// Handover) holds records its tap has not read yet (behind): a backlog, or
// records past a transaction still open that a read_committed consumer
// cannot read until the producer or the broker ends it. While it is
// behind, the streams opened on it do not go idle (Expire): a stream with
// no record read for idle_timeout may have its records in the log, only
// not read yet; the tap is late, not the stream. Once the tap has read what
// the partition held (released), they go idle as before, by the time of
// their last record, at the next Expire: a stream whose end was in what
// the tap read meanwhile has ended by then.
//
// Where in.Pos is a connection (Kind PosConn, in.Conn), the same holds for
// the streams of that connection: its relay is blocked writing to a peer
// that does not read (a paused Gateway, its TCP window closed), and what
// the other peer sent meanwhile waits unread in the sockets.
func (e *Engine) Hold(in *Input, behind bool) {
	if in.Pos.Kind == PosConn {
		e.holdConn(in.Tap, in.Conn, behind, false, in.Time)
		return
	}
	kp := KafkaPartition{Tap: in.Tap, Topic: in.Pos.Name, Partition: in.Pos.Partition}
	o := e.opens
	if o == nil {
		if !behind {
			return
		}
		o = &openFrom{parts: map[KafkaPartition]*openQueue{}, streams: map[openRef]openLoc{}}
		e.opens = o
	}
	q := o.parts[kp]
	if q == nil {
		if !behind {
			return
		}
		q = &openQueue{}
		o.parts[kp] = q
	}
	if q.behind == behind {
		return
	}
	q.behind = behind
	if behind {
		o.behind++
		return
	}
	o.behind--
	if e.cfg.IdleTimeout > 0 && in.Time.UnixNano() < e.nextIdle {
		// Its streams idle meanwhile are due now.
		e.nextIdle = in.Time.UnixNano()
		e.idleDue.Store(e.nextIdle)
	}
}

// A heldConn is a connection whose tap is behind (Hold), or caught up
// less than an idle timeout ago: until is when its streams may go idle
// again (unix ns; math.MaxInt64 while it is behind).
type heldConn struct {
	tap, conn string
	until     int64
}

// holdConn holds the connection (tap, conn), or lets it go (behind false).
// A connection caught up is held one idle timeout more: a relay that has
// emptied its sockets has not always read all its peer sent (after a long
// zero window, the peer's kernel sends again at its next window probe,
// which backs off to seconds), so a stream of it is idle only once the tap
// has been able to see it for an idle timeout. Its end (closed) lets it go
// at once: its streams end by the end-of-connection rule.
func (e *Engine) holdConn(tap, conn string, behind, closed bool, at time.Time) {
	i := slices.IndexFunc(e.heldConns, func(h heldConn) bool { return h.tap == tap && h.conn == conn })
	switch {
	case behind && i < 0:
		e.heldConns = append(e.heldConns, heldConn{tap, conn, math.MaxInt64})
	case behind:
		e.heldConns[i].until = math.MaxInt64
	case i < 0:
	case closed || e.cfg.IdleTimeout <= 0:
		e.heldConns = slices.Delete(e.heldConns, i, i+1)
	default:
		e.heldConns[i].until = at.UnixNano() + int64(e.cfg.IdleTimeout)
		if e.heldConns[i].until < e.nextIdle {
			e.nextIdle = e.heldConns[i].until
			e.idleDue.Store(e.nextIdle)
		}
	}
}

// connHeld says until when the stream of composite key k is held by its
// connection (holdConn), if it is at now. Few connections are ever held
// at once (none, mostly): a look at each costs less than a map.
func (e *Engine) connHeld(k []byte, now int64) (until int64, held bool) {
	for _, h := range e.heldConns {
		if now < h.until && inScope(k, h.tap, h.conn) {
			return h.until, true
		}
	}
	return 0, false
}

// releaseConns forgets the connections caught up an idle timeout before
// now.
func (e *Engine) releaseConns(now int64) {
	e.heldConns = slices.DeleteFunc(e.heldConns, func(h heldConn) bool { return h.until <= now })
}

// held says whether the open stream ref (part, h) was opened on a
// partition that is behind (Hold).
func (o *openFrom) held(part uint8, h uint64) bool {
	if o == nil || o.behind == 0 {
		return false
	}
	loc, ok := o.streams[openRef{part: part, h: h}]
	return ok && loc.q.behind
}

// silentSink takes what a Silent input makes the engine report, and drops
// it.
type silentSink struct{}

func (silentSink) Record(*RecordInfo)      {}
func (silentSink) Finding(*Finding)        {}
func (silentSink) StreamStart(*StreamInfo) {}
func (silentSink) StreamEnd(*StreamInfo)   {}
func (silentSink) StreamsIgnored() bool    { return true }
func (silentSink) RecordsIgnored() bool    { return true }
