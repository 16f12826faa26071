package jsonlog

import (
	"bytes"
	"sync"

	"github.com/e2atap/e2atap/redact"
	"github.com/e2atap/e2atap/validate"
)

// A secret can be split across two chunks of one stream: "…sk-proj-Ab" in
// chunk n's body.delta (or an EventMesh STREAM_CHUNK's text data), "CdEf…"
// in chunk n+1's; or chunk n ends with "Authorization: Token " and chunk
// n+1 holds the token. Neither half need be a
// shape on its own, so the record log (under content: keep, where deltas
// are written) checks every boundary: the last carryTail bytes of the
// previous delta of the stream are scanned again with the start of the
// next one, and a match across the boundary is masked on both sides, with
// the fingerprint of the whole secret.
//
// Masking chunk n's part means its line cannot be written before chunk
// n+1 arrives: the Writer holds the latest chunk line of each stream.
// The hold is bounded in bytes and in time:
//
//   - at most maxHeldLine bytes a line (a longer line is written at once)
//     and maxHeld bytes in all (past it, the oldest held line is written);
//   - a held line is written when the next record of its stream arrives,
//     when the stream ends (StreamEnd), on the second Flush after it was
//     held (the caller flushes on a timer: so at most two flush periods),
//     and on Close.
//
// A model streams a few characters a chunk, so a credential may span many
// chunks: while the joined end of the stream's text may start one
// (redact.MayStartCredential), the lines of its last few deltas are held
// (at most maxPrevs earlier ones, and the bounds above), and a match that
// starts in an earlier delta masks each line it touches whole.
//
// A line written early by these bounds cannot get its tail masked
// afterwards; the next chunk's part still is (the tail is kept apart from
// the line), and such boundaries are counted (Writer.CarryMissed). Lines
// of one stream stay in their order; a held line may come after lines of
// other streams that arrived later.
const (
	carryTail   = 256
	carryHead   = 1024
	maxHeldLine = 64 << 10
	maxHeld     = 4 << 20
	maxTails    = 1 << 16
	maxPrevs    = 64 // earlier lines held a stream (past it the oldest is written)
	carryWord   = 64 // the text's end kept while nothing is held
)

type carry struct {
	mu      sync.Mutex
	streams map[string]*held
	order   []string // keys of held lines, oldest first (may hold stale keys)
	bytes   int      // held line bytes
	epoch   uint64   // Flush count
	missed  uint64
	joined  []byte // scratch of Straddle
	acc     []byte // scratch: a tail and the delta after it
	utail   []byte // scratch: a held tail with its ASCII escapes decoded
	kjoin   []byte // scratch: a tail's end and the delta after it, for OpenKey
	kbuf    []byte // scratch of the map key
}

// held is one stream's carry: the tail of its last delta, and that chunk's
// line while it is held.
type held struct {
	key  string
	tail []byte
	// A model streams a few characters a chunk: while the stream's text
	// may hold a credential in progress, tail is the end of its last few
	// deltas joined, tail[last:] the last one's, and the lines of the
	// earlier ones still in tail are prevs (oldest first; held, or
	// written already by the bounds below), so that a credential across
	// several chunks is masked in each.
	last   int
	prevs  []prevLine
	has    bool // line is held (not written yet)
	line   []byte
	at     int // body.delta's string in line, quotes included
	end    int
	delta  []byte // the unescaped delta of line
	epoch  uint64
	queued bool // in carry.order
	// key: the stream's text is inside a private key block (its header
	// seen, not its END line): every delta is masked until it ends.
	inKey bool
	keyTo int    // line's delta is masked from its start to keyTo (keyBlock)
	keyFP []byte // that mask's fingerprint
}

// prevLine is the line of a delta before the last one still in a held
// tail: held (line != nil) or written already, and its delta's length.
type prevLine struct {
	line    []byte
	at, end int
	n       int
}

func newCarry() *carry { return &carry{streams: make(map[string]*held)} }

// record writes, or holds, the line in st.line of the record ri.
func (c *carry) record(w *Writer, ri *validate.RecordInfo, st *state) {
	if ri.Stream == nil || ri.In == nil {
		w.out.write(st.line)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kbuf = carryKey(c.kbuf[:0], ri.In.Tap, ri.Protocol, ri.Stream)
	h := c.streams[string(c.kbuf)] // no allocation for a look-up
	if st.deltaEnd == 0 || st.trunc {
		// Not a chunk with text: the held line goes first, then this one.
		// (A key block open in the text stays open: a truncated delta
		// goes on with it.)
		if h != nil {
			c.release(w, h)
			h.tail, h.last = h.tail[:0], 0
		}
		w.out.write(st.line)
		return
	}
	if h == nil {
		if len(c.streams) >= maxTails {
			c.evict(w)
		}
		h = &held{key: string(c.kbuf)}
		c.streams[h.key] = h
	}
	cur := st.delta
	hi := 0 // the end of the carry's mask in cur
	if len(h.tail) > 0 {
		hi = c.straddle(w, h, st, cur)
	}
	keyTo := 0
	if h.inKey || len(cur) > 0 && cur[0] == '-' || redact.HasPEMDash(cur) {
		// (A header that ends in cur has its last dashes there: five,
		// or its first bytes are the rest of them.)
		keyTo = c.keyBlock(w, h, st, cur, hi)
	}
	if len(cur) < carryTail && len(h.tail) > 0 {
		c.acc = append(append(c.acc[:0], h.tail[max(0, len(h.tail)-(carryTail-len(cur))):]...), cur...)
	}
	if len(cur) < carryTail && len(h.tail) > 0 && redact.MayStartCredential(c.acc) {
		// The text goes on from the tail: keep the two joined, and the
		// lines whose deltas are in it.
		p := prevLine{n: len(h.delta)}
		if h.has {
			p.line, p.at, p.end = h.line, h.at, h.end
			h.line, h.has = nil, false
		}
		h.prevs = append(h.prevs, p)
		in := len(c.acc) - len(cur) // the prevs' bytes in the new tail
		total := 0
		for _, q := range h.prevs {
			total += q.n
		}
		for len(h.prevs) > 1 && (total-h.prevs[0].n >= in || len(h.prevs) > maxPrevs) {
			total -= h.prevs[0].n
			c.writePrev(w, &h.prevs[0])
			h.prevs = h.prevs[1:]
		}
		h.tail = append(h.tail[:0], c.acc...)
		h.last = in
	} else {
		c.release(w, h)
		if len(cur) < carryWord && len(h.tail) > 0 {
			// The end of the text, so that a key or prefix written a
			// letter or two a chunk ("p" | "a" | "s" | "s…") is seen when
			// the joined text may start one.
			h.tail = append(h.tail[:0], c.acc[max(0, len(c.acc)-carryWord):]...)
			h.last = len(h.tail) - len(cur)
		} else {
			h.tail = append(h.tail[:0], cur[max(0, len(cur)-carryTail):]...)
			h.last = 0
		}
	}
	// Hold this line.
	if len(st.line) > maxHeldLine {
		w.out.write(st.line)
		return
	}
	h.line, h.has = append(h.line[:0], st.line...), true
	h.at, h.end = st.deltaAt, st.deltaEnd
	h.delta = append(h.delta[:0], cur...)
	h.keyTo = keyTo
	if keyTo > 0 {
		h.keyFP = st.appendFP(h.keyFP[:0], cur[:keyTo])
	}
	if !heldPrev(h) {
		h.epoch = c.epoch // (else the oldest held line's: a flush bounds its wait)
	}
	c.bytes += len(h.line)
	if !h.queued {
		h.queued = true
		c.order = append(c.order, h.key)
	}
	for c.bytes > maxHeld && len(c.order) > 1 {
		k := c.order[0]
		c.order = c.order[1:]
		o := c.streams[k]
		if o == h {
			c.order = append(c.order, k)
			continue
		}
		if o != nil {
			o.queued = false
			c.release(w, o)
		}
	}
}

// straddle masks a credential that starts in h's tail and ends in cur (the
// current delta): in h's held line, and in st.line. It returns the end of
// its mask in cur (0: none).
func (c *carry) straddle(w *Writer, h *held, st *state, cur []byte) int {
	if len(h.prevs) > 0 {
		if hi, ok := c.across(w, h, st, cur); ok {
			return hi
		}
	}
	tail := h.tail[h.last:] // the last delta's end, as when only it is kept
	nt := len(tail)
	var m redact.Match
	var ok bool
	c.joined, m, ok = redact.Straddle(c.joined, tail, cur[:min(len(cur), carryHead)])
	if !ok && bytes.IndexByte(tail, '\\') >= 0 && redact.HasASCIIEscape(tail) {
		// The previous delta ends in a key spelled with escapes of its
		// own (JSON text: "p\u0061ssword:" | " <pw>"): the value wholly
		// in this delta is masked, as Masker.Text masks the two joined.
		c.utail = redact.UnescapeASCII(c.utail[:0], tail)
		if c.joined, m, ok = redact.Straddle(c.joined, c.utail, cur[:min(len(cur), carryHead)]); ok && m.Start >= len(c.utail) &&
			!isMaskToken(c.joined[m.Start:m.End]) {
			nu := len(c.utail)
			w.counts[kindRule[m.Kind]].Add(1)
			fp := st.appendFP(nil, c.joined[m.Start:m.End])
			st.spliceLine(cur[:m.Start-nu], fp, cur[m.End-nu:])
			return m.End - nu
		}
		return 0
	}
	if !ok || isMaskToken(c.joined[m.Start:m.End]) {
		return 0
	}
	j := c.joined
	fp := st.appendFP(nil, j[m.Start:m.End])
	w.counts[kindRule[m.Kind]].Add(1)
	if m.Start >= nt {
		// Wholly in this delta, a secret only because of the previous
		// one's end ("Authorization: Token " | "<token>").
		st.spliceLine(cur[:m.Start-nt], fp, cur[m.End-nt:])
		return m.End - nt
	}
	// j[m.Start:nt] ends the previous delta, cur[:m.End-nt] starts this one;
	// or (m.End <= nt) the credential is wholly in the previous delta, a
	// credential only because of this one's start ("bus:pw" |
	// "@kafka-1:9092", "scott%2Fpw%4" | "0%2F%2Fdb…").
	cut := max(0, m.End-nt)
	if h.has {
		keep := len(h.delta) - (nt - m.Start)
		rest := len(h.delta) - (nt - m.End + cut)
		n := len(h.line)
		switch {
		case h.keyTo >= keep:
			// The line's delta is a key block's from its start: it stays
			// masked with the match.
			h.line = st.spliceDelta(h.line, h.at, h.end, nil, fp, h.delta[max(rest, h.keyTo):])
		case h.keyTo > 0:
			h.line = st.spliceDelta(h.line, h.at, h.end, nil, h.keyFP, nil, h.delta[h.keyTo:keep], fp, h.delta[rest:])
		default:
			h.line = st.spliceDelta(h.line, h.at, h.end, h.delta[:keep], fp, h.delta[rest:])
		}
		h.end += len(h.line) - n
		c.bytes += len(h.line) - n
	} else {
		c.missed++
	}
	if m.End <= nt {
		return 0
	}
	if !m.Kind.Credential() {
		// An address cut in two after a password's label ("Password for
		// bob@exam" | "ple.com: <pw>"): the password after it in cur is
		// masked too, which cur alone does not show.
		var x redact.Match
		if c.joined, x, ok = redact.StraddleNext(c.joined, tail, cur[:min(len(cur), carryHead)], m); ok && !isMaskToken(c.joined[x.Start:x.End]) {
			fx := st.appendFP(nil, c.joined[x.Start:x.End])
			w.counts[kindRule[x.Kind]].Add(1)
			n := len(st.line)
			st.line = st.spliceDelta(st.line, st.deltaAt, st.deltaEnd, nil, fp, cur[cut:x.Start-nt], fx, cur[x.End-nt:])
			st.deltaEnd += len(st.line) - n
			return x.End - nt
		}
	}
	st.spliceLine(nil, fp, cur[cut:])
	return cut
}

// across masks a credential that starts in an earlier delta than the last
// one and runs into cur (a model's tokens: "sk" | "-pro" | "j-Xq" | …),
// and reports whether there was one. Each line it touches is masked whole
// (its delta's text around it too): the held lines of the earlier deltas,
// the last one's, and this one's up to its end (returned).
func (c *carry) across(w *Writer, h *held, st *state, cur []byte) (int, bool) {
	var m redact.Match
	var ok bool
	c.joined, m, ok = redact.Straddle(c.joined, h.tail, cur[:min(len(cur), carryHead)])
	if !ok || m.Start >= h.last || m.End <= len(h.tail) || isMaskToken(c.joined[m.Start:m.End]) {
		return 0, false
	}
	fp := st.appendFP(nil, c.joined[m.Start:m.End])
	w.counts[kindRule[m.Kind]].Add(1)
	c.maskPrevs(st, h, m, fp)
	if h.has {
		n := len(h.line)
		h.line = st.spliceDelta(h.line, h.at, h.end, nil, fp, nil)
		h.end += len(h.line) - n
		c.bytes += len(h.line) - n
	} else {
		c.missed++
	}
	st.spliceLine(nil, fp, cur[m.End-len(h.tail):])
	return m.End - len(h.tail), true
}

// keyTail is how much of the end of a stream's text keyBlock reads again
// with the next delta: a key block's header or END line cut across them
// (either is at most 70 bytes).
const keyTail = 80

// keyBlock masks cur (the current delta) from its start to the end of a
// private key block opened in an earlier delta, and keeps whether one is
// open at its end (h.inKey). Find masks a block from its header to the end
// of the delta; the base64 lines of the next deltas are named by nothing,
// and a few of them were printed whenever the delta was cut more than
// carryTail bytes after the header. hi is the end of straddle's mask in
// cur: the splice here covers it too.
// It returns the end of its mask in cur (0: none).
func (c *carry) keyBlock(w *Writer, h *held, st *state, cur []byte, hi int) int {
	t := h.tail[max(0, len(h.tail)-keyTail):]
	c.kjoin = append(append(c.kjoin[:0], t...), cur...)
	to, open := redact.OpenKey(c.kjoin, len(t), h.inKey)
	h.inKey = open
	if to -= len(t); to <= 0 {
		return 0
	}
	fp := st.appendFP(nil, cur[:to])
	w.counts[kindRule[redact.KindPrivateKey]].Add(1)
	to = max(to, hi)
	st.spliceLine(nil, fp, cur[to:])
	return to
}

// spliceLine is spliceDelta on st.line, whose delta string then ends
// elsewhere: st.deltaEnd follows it. (The line is held with it next, and
// the next delta's carry splices it again: with the end of the string
// before the splice, it cut the line inside the original delta, and
// printed the rest of a PEM key after the mask's closing quote.)
func (st *state) spliceLine(before, fp, after []byte) {
	n := len(st.line)
	st.line = st.spliceDelta(st.line, st.deltaAt, st.deltaEnd, before, fp, after)
	st.deltaEnd += len(st.line) - n
}

// spliceDelta rewrites the delta string line[at:end] as before, the mask of
// fingerprint fp, and after (both masked as any text is); more such
// masks and texts may follow (text, fp, text, ...).
func (st *state) spliceDelta(line []byte, at, end int, before, fp, after []byte, more ...[]byte) []byte {
	out := append([]byte(nil), line[:at]...)
	out = append(out, '"')
	out, _ = st.maskSpans(out, before, false, true)
	out = append(out, mask+"(fp:"...)
	out = append(out, fp...)
	out = append(out, ')')
	out, _ = st.maskSpans(out, after, false, true)
	for i := 0; i+1 < len(more); i += 2 {
		out = append(out, mask+"(fp:"...)
		out = append(out, more[i]...)
		out = append(out, ')')
		out, _ = st.maskSpans(out, more[i+1], false, true)
	}
	out = append(out, '"')
	return append(out, line[end:]...)
}

// maskPrevs masks whole the held lines of the earlier deltas that the
// match m (in tail coordinates, starting before h.last) touches; one
// written already is counted missed.
func (c *carry) maskPrevs(st *state, h *held, m redact.Match, fp []byte) {
	total := 0
	for _, q := range h.prevs {
		total += q.n
	}
	off := h.last - total // tail offset where prevs[0]'s delta starts (may be < 0)
	for i := range h.prevs {
		q := &h.prevs[i]
		lo, hi := off, off+q.n
		off = hi
		if hi <= m.Start || lo >= m.End || hi <= 0 {
			continue
		}
		if q.line == nil {
			c.missed++
			continue
		}
		n := len(q.line)
		q.line = st.spliceDelta(q.line, q.at, q.end, nil, fp, nil)
		q.end += len(q.line) - n
		c.bytes += len(q.line) - n
	}
}

// heldPrev reports whether h holds a line of an earlier delta.
func heldPrev(h *held) bool {
	for _, q := range h.prevs {
		if q.line != nil {
			return true
		}
	}
	return false
}

// writePrev writes a held earlier line and forgets it.
func (c *carry) writePrev(w *Writer, q *prevLine) {
	if q.line != nil {
		w.out.write(q.line)
		c.bytes -= len(q.line)
		q.line = nil
	}
}

// release writes h's held lines, if any, in their order.
func (c *carry) release(w *Writer, h *held) {
	for i := range h.prevs {
		c.writePrev(w, &h.prevs[i])
	}
	h.prevs = h.prevs[:0]
	if !h.has {
		return
	}
	w.out.write(h.line)
	c.bytes -= len(h.line)
	h.has = false
	if cap(h.line) > maxHeldLine {
		h.line = nil
	}
}

// evict forgets some stream (the map is full: streams whose end was never
// reported).
func (c *carry) evict(w *Writer) {
	for k, h := range c.streams {
		c.release(w, h)
		delete(c.streams, k)
		return
	}
}

// end writes the held line of a stream that ended and forgets it.
func (c *carry) end(w *Writer, tap, proto, stream string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kbuf = carryKey(c.kbuf[:0], tap, proto, []byte(stream))
	if h := c.streams[string(c.kbuf)]; h != nil {
		c.release(w, h)
		delete(c.streams, h.key)
	}
}

// carryKey is the map key of a stream: its tap, protocol (an E2A
// request_id and a frame sid may be equal) and key.
func carryKey(dst []byte, tap, proto string, stream []byte) []byte {
	dst = append(append(dst, tap...), 0)
	dst = append(append(dst, proto...), 0)
	return append(dst, stream...)
}

// flush writes the lines held since before the previous flush.
func (c *carry) flush(w *Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := c.order[:0]
	for _, k := range c.order {
		h := c.streams[k]
		if h == nil {
			continue
		}
		if !h.has || h.epoch < c.epoch {
			h.queued = false
			c.release(w, h)
			continue
		}
		keep = append(keep, k)
	}
	c.order = keep
	c.epoch++
}

// all writes every held line.
func (c *carry) all(w *Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.streams {
		h.queued = false
		c.release(w, h)
	}
	c.order = c.order[:0]
}
