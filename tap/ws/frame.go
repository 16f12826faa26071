package ws

import (
	"crypto/rand"
	"encoding/binary"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// WebSocket opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// Close codes the proxy itself sends; every other code is the peers' and
// passes through untouched.
const closeGoingAway = 1001

// maxControlPayload is the largest payload a control frame may carry.
const maxControlPayload = 125

// messageSink receives what a frameParser reassembles: one call per
// complete data message. payload is the unmasked message (still compressed
// when compressed is set); it is nil when the message was not kept
// (oversize, over budget). charged is how much of the parser's budget
// payload holds: the sink owns that charge and must pass it on or release
// it. wireSize is the sum of the frames' payload lengths.
type messageSink interface {
	message(m parsedMessage)
	// overBudget says that the message being reassembled was let go
	// because the budget had no room: its copy is lost now, whether or
	// not the message ever ends.
	overBudget()
}

type parsedMessage struct {
	op         byte // opText or opBinary
	compressed bool // RSV1 on the first frame (permessage-deflate)
	foreignRSV bool // RSV bits this tap cannot interpret
	oversize   bool // the payload grew past the limit and was not kept
	overBudget bool // the budget had no room for the payload: not kept
	payload    []byte
	charged    int
	wireSize   int
	at         time.Time // when the last byte of the message was read
}

// frameParser follows one direction of a WebSocket byte stream, fed in
// chunks of any size, and reassembles data messages for the mirror. It never
// influences what is relayed: the relay has already written the bytes when
// the parser sees them. A framing error stops it for good (broken).
//
// The message being reassembled is charged to budget as its buffer grows
// (by capacity, so the charge is what is held); when a charge fails its
// bytes are let go at once and the message is reported overBudget.
type frameParser struct {
	sink     messageSink
	maxBytes int
	budget   *tap.Budget
	// rsvOK are the RSV bits the negotiated extensions explain: 0x4 (RSV1)
	// when permessage-deflate is on.
	rsvOK byte

	// Frame header being read.
	hdr     [14]byte
	hdrN    int
	hdrNeed int

	// Current frame, once its header is complete.
	inFrame bool
	fin     bool
	op      byte
	masked  bool
	mask    [4]byte
	maskPos int
	remain  uint64

	// Control frame payload (for the close code).
	ctl  [maxControlPayload]byte
	ctlN int

	// Message being reassembled.
	inMsg bool
	msg   parsedMessage
	buf   []byte // its payload so far (unmasked, still compressed if it is)
	held  int    // budget charged for buf

	broken    bool
	closeSeen bool // a close frame travelled in this direction
}

func newFrameParser(sink messageSink, maxBytes int, rsvOK byte) *frameParser {
	return &frameParser{sink: sink, maxBytes: maxBytes, rsvOK: rsvOK, hdrNeed: 2}
}

// atBoundary reports whether the stream is between two frames, where a frame
// of the proxy's own (the 1001 close at shutdown) may be inserted.
func (p *frameParser) atBoundary() bool {
	return !p.broken && !p.inFrame && p.hdrN == 0
}

// toBoundary is how many more bytes end the current frame, or a lower bound
// when the header is not complete yet; at least 1.
func (p *frameParser) toBoundary() int {
	if p.inFrame {
		if p.remain > 1<<30 {
			return 1 << 30
		}
		return max(int(p.remain), 1)
	}
	return max(p.hdrNeed-p.hdrN, 1)
}

// feed consumes the next bytes of the stream. It reports a framing error
// once, the first time the stream stops making sense.
func (p *frameParser) feed(b []byte, now time.Time) (brokeNow bool) {
	for len(b) > 0 && !p.broken {
		if !p.inFrame {
			n := copy(p.hdr[p.hdrN:p.hdrNeed], b)
			p.hdrN += n
			b = b[n:]
			if p.hdrN == 2 {
				p.hdrNeed = headerLen(p.hdr[1])
			}
			if p.hdrN < p.hdrNeed {
				continue
			}
			if !p.startFrame() {
				p.broken = true
				p.release()
				return true
			}
			if p.remain == 0 {
				p.endFrame(now)
			}
			continue
		}
		n := len(b)
		if uint64(n) > p.remain {
			n = int(p.remain)
		}
		p.payload(b[:n])
		b = b[n:]
		p.remain -= uint64(n)
		if p.remain == 0 {
			p.endFrame(now)
		}
	}
	return false
}

// headerLen is the full header length implied by the second header byte.
func headerLen(b1 byte) int {
	n := 2
	switch b1 & 0x7F {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b1&0x80 != 0 {
		n += 4
	}
	return n
}

// startFrame decodes a complete header; false on a framing error.
func (p *frameParser) startFrame() bool {
	b0, b1 := p.hdr[0], p.hdr[1]
	p.fin = b0&0x80 != 0
	rsv := b0 & 0x70
	p.op = b0 & 0x0F
	p.masked = b1&0x80 != 0
	i := 2
	switch l := b1 & 0x7F; l {
	case 126:
		p.remain = uint64(binary.BigEndian.Uint16(p.hdr[2:4]))
		i = 4
	case 127:
		p.remain = binary.BigEndian.Uint64(p.hdr[2:10])
		i = 10
		if p.remain>>63 != 0 {
			return false
		}
	default:
		p.remain = uint64(l)
	}
	if p.masked {
		copy(p.mask[:], p.hdr[i:i+4])
		p.maskPos = 0
	}
	p.inFrame = true
	p.hdrN, p.hdrNeed = 0, 2

	switch p.op {
	case opClose, opPing, opPong:
		// Control frames may sit between the fragments of a message.
		if !p.fin || p.remain > maxControlPayload || rsv != 0 {
			return false
		}
		p.ctlN = 0
		return true
	case opText, opBinary:
		if p.inMsg {
			return false
		}
		p.inMsg = true
		p.msg = parsedMessage{
			op:         p.op,
			compressed: rsv&0x40 != 0 && p.rsvOK&0x40 != 0,
			foreignRSV: rsv&^p.rsvOK != 0,
		}
		if p.fin && p.remain <= uint64(p.maxBytes) && !p.msg.foreignRSV && !p.reserve(int(p.remain)) {
			// The common case is one frame, whose exact size is known: the
			// copy is allocated (and charged) once.
			p.msg.overBudget = true
			p.sink.overBudget()
		}
		return true
	case opContinuation:
		// RSV1 is only set on the first frame of a compressed message.
		return p.inMsg && rsv == 0
	}
	return false // reserved opcode
}

func (p *frameParser) payload(b []byte) {
	if p.op >= opClose {
		n := copy(p.ctl[p.ctlN:], b)
		p.unmask(p.ctl[p.ctlN : p.ctlN+n])
		p.ctlN += n
		return
	}
	m := &p.msg
	m.wireSize += len(b)
	switch {
	case m.oversize || m.foreignRSV || m.overBudget:
	case m.wireSize > p.maxBytes:
		m.oversize = true
		p.release()
	case !p.reserve(len(b)):
		m.overBudget = true
		p.release()
		p.sink.overBudget()
	default:
		start := len(p.buf)
		p.buf = append(p.buf, b...)
		p.unmask(p.buf[start:])
		return
	}
	p.maskPos = (p.maskPos + len(b)) & 3
}

// reserve makes room for n more bytes in buf, charging the budget for the
// capacity it adds; false when the budget has no room.
func (p *frameParser) reserve(n int) bool {
	if cap(p.buf)-len(p.buf) >= n {
		return true
	}
	// A whole message in one frame gets its exact size; fragments grow by
	// doubling, but never past the limit the message may reach.
	c := max(2*cap(p.buf), len(p.buf)+n)
	if !p.fin {
		c = max(c, 512)
	}
	c = min(c, max(p.maxBytes, len(p.buf)+n))
	if !p.budget.TryAcquire(c - cap(p.buf)) {
		return false
	}
	if p.budget != nil {
		p.held += c - cap(p.buf)
	}
	nb := make([]byte, len(p.buf), c)
	copy(nb, p.buf)
	p.buf = nb
	return true
}

// release lets go of the message being reassembled and of its charge: it
// was not kept, or the connection ended before it did.
func (p *frameParser) release() {
	p.budget.Release(p.held)
	p.buf, p.held = nil, 0
}

func (p *frameParser) endFrame(now time.Time) {
	p.inFrame = false
	switch p.op {
	case opClose:
		p.closeSeen = true
		return
	case opPing, opPong:
		return
	}
	if !p.fin {
		return
	}
	m := p.msg
	m.at = now
	if !m.oversize && !m.foreignRSV && !m.overBudget {
		m.payload, m.charged = p.buf, p.held
		if m.payload == nil {
			m.payload = []byte{} // an empty message, kept
		}
	}
	p.buf, p.held = nil, 0
	p.inMsg = false
	p.msg = parsedMessage{}
	p.sink.message(m)
}

// unmask XORs b with the frame's masking key, continuing at maskPos.
func (p *frameParser) unmask(b []byte) {
	if !p.masked {
		return
	}
	p.maskPos = maskBytes(p.mask, p.maskPos, b)
}

// maskBytes XORs b with key starting at key position pos and returns the
// position after b. Eight bytes at a time: the mirror unmasks every byte the
// client sends.
func maskBytes(key [4]byte, pos int, b []byte) int {
	for len(b) > 0 && pos != 0 {
		b[0] ^= key[pos]
		b = b[1:]
		pos = (pos + 1) & 3
	}
	k32 := binary.LittleEndian.Uint32(key[:])
	k64 := uint64(k32) | uint64(k32)<<32
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k64)
		b = b[8:]
	}
	for i := range b {
		b[i] ^= key[pos]
		pos = (pos + 1) & 3
	}
	return pos
}

// closeFrame builds a close frame with code and reason; masked for frames a
// client sends (RFC 6455 §5.3).
func closeFrame(code uint16, reason string, masked bool) []byte {
	n := 2 + len(reason)
	f := make([]byte, 0, 2+4+n)
	f = append(f, 0x80|opClose)
	if masked {
		f = append(f, 0x80|byte(n))
		var key [4]byte
		_, _ = rand.Read(key[:]) // crypto/rand.Read never fails
		f = append(f, key[:]...)
		start := len(f)
		f = binary.BigEndian.AppendUint16(f, code)
		f = append(f, reason...)
		maskBytes(key, 0, f[start:])
		return f
	}
	f = append(f, byte(n))
	f = binary.BigEndian.AppendUint16(f, code)
	return append(f, reason...)
}
