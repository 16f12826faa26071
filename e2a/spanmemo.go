package e2a

import "math/bits"

// Span memos: a run of members that each matched their key memo whole
// (keyMemo.whole), remembered as one. A producer writes most members of a
// record as it wrote them in the record before (a response's 18 closing
// members, "jsonrpc_id": null through "acp_meta": {}, are the same bytes
// in every chunk), and object took them one memo at a time: a look-up, a
// 32-byte compare and the loop's checks a member. A span is their bytes
// compared at once (runtime memequal) and the values they set, set at
// once.
//
// A span is only ever made of members that matched whole at the bytes it
// keeps, so the bytes say everything its members set: a whole member's
// value is a clean string, a literal, a number or an empty container, set
// in a field or a Sub as memoSet does (a repeated container key forgets
// what the earlier one held, by the scanner's state, as memoSet does).
// Spans are keyed, like key memos, by the key before the run's first
// member and the kind of the object.

// spanLen: the bytes a span keeps; spanActs: the members; spanSlots: the
// spans a record keeps (the places in a producer's records where a run
// starts: a dozen).
const (
	spanLen   = 256
	spanActs  = 24
	spanSlots = 64
)

// spanAct is a value one member of a span sets (a keyMemo's memoSet):
// Fields[arg] or Subs[arg].
type spanAct struct {
	arg uint8
	sub bool
	vt  JSONType
	vb  bool
	sl  uint8
	so  uint16 // a string's or a number's Str: the span's bytes [so, so+sl)
}

type spanMemo struct {
	n    uint16 // the bytes; 0: none
	prev uint16 // the key before the first member (keyMemos.e's index)
	h    uint16 // the last member's key (the key before what follows)
	k    objKind
	last bool // the last member closes the object
	// head: the first member's keyMemo.sig.
	head  uint64
	np    uint8
	ns    uint8
	marks uint64 // the Fields the members set (Record.fieldsSet)
	subs  uint16 // the Subs (Record.subsSet)
	// forgets: the kinds of container fields set (memoSet's forget), a
	// bit each.
	forgets uint16
	// plain: the values without a Str; strs: those with one. A span
	// sets a Field or a Sub once at most, so their order is free.
	plain [spanActs]spanAct
	strs  [spanActs]spanAct
	b     [spanLen]byte
}

// spanMemos are a record's spans (keyMemos.spans), made on the first run:
// two a head (a keyMemo whose whole member starts runs), the newer first,
// as a key has two memos: a producer's requests and responses go on
// differently after the same member.
type spanMemos struct {
	s    [spanSlots / 2]spanPair
	next uint8 // the pair putSpan takes next
}

type spanPair struct {
	s [2]spanMemo // the newer first
}

// span is the span that starts at data[i] whose first member matched e
// whole, after the key prev in an object of kind k, or nil. The first
// member's bytes are not compared again: the span's first member must
// only do what e does there (keyMemo.sig; its value's bytes are read from
// data as e's are). A pair another head took over holds spans of other
// first members, and two memos of a key may differ only in their value.
func (t *keyMemos) span(e *keyMemo, prev uint16, k objKind, data []byte, i int) *spanMemo {
	p := &t.spans.s[(e.span-1)%(spanSlots/2)]
	w := int(e.whole)
	for j := range p.s {
		sp := &p.s[j]
		if sp.n != 0 && sp.prev == prev && sp.k == k && sp.head == e.sig && int(sp.n) <= len(data)-i &&
			string(data[i+w:i+int(sp.n)]) == string(sp.b[w:sp.n]) {
			return sp
		}
	}
	return nil
}

// putSpan remembers the run of whole members at data[start:end] (end:
// the next member's key, or past the closing brace), the first after the
// key prev in an object of kind k, as a span: its members are found again
// by the key memos that matched them (unchanged since: a whole member
// changes no memo), as many as fit in a span. The first member's memo
// says where it is (keyMemo.span).
func (t *keyMemos) putSpan(data []byte, k objKind, prev uint16, start, end int) {
	var sp spanMemo
	var head *keyMemo
	members := 0
	p, j := prev, start
	var pad [keyMemoLen]byte
members:
	for j < end {
		d := memoAt(data, j, &pad)
		ways := &t.e[p]
		e := &ways[0]
		if e.whole == 0 || e.k != k || !e.matchN(d, &memoMasks[e.whole]) {
			if e = &ways[1]; e.whole == 0 || e.k != k || !e.matchN(d, &memoMasks[e.whole]) {
				break
			}
		}
		nj := j + int(e.whole)
		if !e.last {
			nj = skipWS(data, nj)
		}
		if nj-start > spanLen {
			break
		}
		if int(sp.np)+int(sp.ns) == spanActs {
			break
		}
		a := spanAct{arg: e.act.arg, vt: e.vt, vb: e.vb}
		switch e.set {
		case setField:
			if sp.marks&(1<<e.act.arg) != 0 {
				break members // a key twice: the last wins
			}
			sp.marks |= 1 << e.act.arg
			if e.nest {
				sp.forgets |= 1 << nestedKind(Field(e.act.arg))
			}
		case setSub:
			if sp.subs&(1<<e.act.arg) != 0 {
				break members
			}
			a.sub = true
			sp.subs |= 1 << e.act.arg
		}
		if e.set != setNone {
			if e.str {
				a.so, a.sl = uint16(j-start+int(e.m)+int(e.so)), e.sl
				sp.strs[sp.ns] = a
				sp.ns++
			} else {
				sp.plain[sp.np] = a
				sp.np++
			}
		}
		if head == nil {
			head = e
		}
		members++
		sp.h, sp.last = uint16(e.h), e.last
		p, j = uint16(e.h), nj
		if e.last {
			break
		}
	}
	if members < 2 {
		return
	}
	sp.n, sp.prev, sp.k = uint16(j-start), prev, k
	sp.head = head.sig
	copy(sp.b[:], data[start:j])
	if t.spans == nil {
		t.spans = new(spanMemos)
	}
	// The pair of the head's spans, unless another head took it since.
	slot := head.span
	if slot == 0 || t.spans.s[slot-1].s[0].prev != prev || t.spans.s[slot-1].s[0].k != k {
		t.spans.next = (t.spans.next + 1) % (spanSlots / 2)
		slot = t.spans.next + 1
		t.spans.s[slot-1] = spanPair{}
	}
	pair := &t.spans.s[slot-1]
	pair.s[1] = pair.s[0]
	pair.s[0] = sp
	head.span = slot
}

// applySpan sets what sp's members set, sp matched at data[i].
func (s *scanner) applySpan(sp *spanMemo, i int) {
	r := s.r
	r.fieldsSet |= sp.marks
	r.subsSet |= sp.subs
	if f := sp.forgets; s.forgot&f == 0 {
		// forget's first occurrences, at once: nothing to drop.
		s.forgot |= f
	} else {
		for m := f; m != 0; m &= m - 1 {
			s.forget(objKind(bits.TrailingZeros16(m)))
		}
	}
	for j := range sp.plain[:sp.np] {
		a := &sp.plain[j]
		if a.sub {
			r.Subs[a.arg] = Value{Type: a.vt, Bool: a.vb}
		} else {
			r.Fields[a.arg] = Value{Type: a.vt, Bool: a.vb}
		}
	}
	data := s.data
	for j := range sp.strs[:sp.ns] {
		a := &sp.strs[j]
		o := i + int(a.so)
		v := Value{Type: a.vt, Str: data[o : o+int(a.sl) : o+int(a.sl)]}
		if a.sub {
			r.Subs[a.arg] = v
		} else {
			r.Fields[a.arg] = v
		}
	}
}
