package validate

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
)

// router finds what a sharded run needs before a shard judges a message:
// the stream key (request_id, sid, event id) and whether it is a
// chat.interrupt (which every shard must see). It reads only the top level
// of a JSON record (e2a.ScanHead: escapes and non-ASCII handled as the
// scanner does, so that routing and checking never disagree) and only the
// attributes of a frame; it does not validate: the shard's full scan does.
// A run of one shard routes nothing.
//
// Most records take a shorter way (quickRoute): a few vectorised byte
// searches prove that the record has at most one "request_id" key and no
// chat.interrupt, and the top level is then walked only up to that key.
type router struct {
	head e2a.Head
	buf  []byte
}

// routeJSON returns the stream key of a JSON record (aliasing data or the
// router's buffer, valid until the next call) and whether it is a
// chat.interrupt.
func (r *router) routeJSON(data []byte) (key []byte, interrupt bool) {
	if stop, ok := quickRoute(data); ok {
		if stop < 0 {
			return nil, false
		}
		r.buf = e2a.ScanHeadTo(data, r.buf[:0], &r.head, stop)
		return r.head.RequestID, false
	}
	r.buf = e2a.ScanHead(data, r.buf[:0], &r.head)
	return r.head.RequestID, r.head.Interrupt
}

// quickRoute decides whether ScanHeadTo up to one key gives what ScanHead
// would: ok when data holds at most one `"request_id"` (at stop, -1 for
// none), no "chat.interrupt" and no \u00XX escape of a printable ASCII
// byte. Why that suffices: a top-level key that reads as request_id or
// method, and a method value that reads as chat.interrupt, are spelt
// either literally or with such an escape (the other escapes make only
// quotes, backslashes, slashes and control bytes; malformed UTF-8 becomes
// U+FFFD). So the only request_id ScanHead could take is the literal at
// stop, ScanHead's Interrupt is false, and ScanHead's walk before stop is
// ScanHeadTo's; after stop nothing can change its key (a later member
// cut by the end or malformed stops it with the key kept). Everything
// else (an interrupt, a repeated key, escaped keys) takes ScanHead.
//
// Where the CPU has AVX2, one vector pass marks every byte of the three
// kinds (routeMarks) and the marks are read in order; else three byte
// searches find them (quickRouteScalar: every mark restarts a search, and
// a record holds a dozen: a tenth of what 2 shards spent above one).
func quickRoute(data []byte) (stop int, ok bool) {
	if !haveRouteMarks || len(data) < 64 {
		return quickRouteScalar(data)
	}
	return quickRouteMarks(data)
}

// routeMarkBlocks is how many 64-byte blocks quickRouteMarks marks at a
// time (its words on the stack).
const routeMarkBlocks = 32

// quickRouteMarks is quickRoute reading the marks of routeMarksAVX2.
func quickRouteMarks(data []byte) (stop int, ok bool) {
	stop = -1
	esc := 0 // a backslash before this is escaped
	var words [routeMarkBlocks]uint64
	var pad [64]byte
	for base := 0; base < len(data); base += routeMarkBlocks * 64 {
		n := min(routeMarkBlocks, (len(data)-base)/64)
		if n > 0 {
			routeMarksAVX2(&data[base], n, &words[0])
		}
		if rest := len(data) - base - n*64; rest > 0 && n < routeMarkBlocks {
			// The last part block, read from a copy padded with zeros.
			pad = [64]byte{}
			copy(pad[:], data[base+n*64:])
			routeMarksAVX2(&pad[0], 1, &words[n])
			n++
		}
		for w, m := range words[:n] {
			for ; m != 0; m &= m - 1 {
				i := base + w*64 + bits.TrailingZeros64(m)
				if i >= len(data) {
					break
				}
				switch data[i] {
				case 'q':
					if i >= 3 && i+9 <= len(data) && string(data[i-3:i+9]) == `"request_id"` {
						if stop >= 0 {
							return -1, false
						}
						stop = i - 3
					}
				case '\\':
					if i < esc {
						continue
					}
					if i+5 < len(data) && data[i+1] == 'u' && data[i+2] == '0' && data[i+3] == '0' && data[i+4] >= '2' && data[i+4] <= '7' {
						return -1, false
					}
					esc = i + 2
				case '.':
					if i >= 4 && i+10 <= len(data) && string(data[i-4:i+10]) == "chat.interrupt" {
						return -1, false
					}
				}
			}
		}
	}
	return stop, true
}

// quickRouteScalar is quickRoute by byte searches.
func quickRouteScalar(data []byte) (stop int, ok bool) {
	stop = -1
	// 'q' is rare in records: find every "request_id" by it.
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], 'q')
		if j < 0 {
			break
		}
		q := i + j
		if q >= 3 && q+9 <= len(data) && string(data[q-3:q+9]) == `"request_id"` {
			if stop >= 0 {
				return -1, false
			}
			stop = q - 3
		}
		i = q + 1
	}
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\\')
		if j < 0 {
			break
		}
		b := i + j
		if b+5 < len(data) && data[b+1] == 'u' && data[b+2] == '0' && data[b+3] == '0' && data[b+4] >= '2' && data[b+4] <= '7' {
			return -1, false
		}
		i = b + 2 // an escaped backslash does not start an escape
		if i >= len(data) {
			break
		}
	}
	// "chat.interrupt" by its dot.
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '.')
		if j < 0 {
			break
		}
		d := i + j
		if d >= 4 && d+10 <= len(data) && string(data[d-4:d+10]) == "chat.interrupt" {
			return -1, false
		}
		i = d + 1
	}
	return stop, true
}

// routeFrame returns the stream key of a frame: sid, or id for an EVENT.
func routeFrame(f *frame.Frame) []byte {
	attr := "sid"
	if f.MsgType == frame.TypeEvent {
		attr = "id"
	}
	key, _ := f.Attr(attr)
	return key
}

// skimFrame reads what a walk needs of the frame at the front of b without
// decoding it: its size, where its attributes end and its stream key
// (routeFrame's: sid, or id for an EVENT, the last one winning as in
// Frame.Attr; nil when absent). ok is true only where frame.DecodeTo would
// accept the frame (the same checks in the same order; TestSkimFrame),
// with the same size; Frame.SetSkimmed then gives DecodeTo's frame.
func skimFrame(b []byte) (size, attrsEnd int, key []byte, ok bool) {
	n := len(b)
	if n < frame.HeaderLen || b[0] != frame.Magic || b[1] != frame.Version {
		return 0, 0, nil, false
	}
	keyCount := int(binary.BigEndian.Uint16(b[8:10]))
	dataLen := int32(binary.BigEndian.Uint32(b[10:14]))
	if keyCount > frame.MaxAttributes || dataLen < 0 || dataLen > frame.MaxDataBytes || int(dataLen) > n-frame.HeaderLen {
		return 0, 0, nil, false
	}
	event := b[2] == frame.TypeEvent
	p := frame.HeaderLen
	for i := 0; i < keyCount; i++ {
		// [nameLen u16][name][valueLen i32][value]
		if n-p < 6 {
			return 0, 0, nil, false
		}
		a := b[p:]
		nl := int(binary.BigEndian.Uint16(a))
		if nl > len(a)-6 {
			return 0, 0, nil, false
		}
		v := p + 6 + nl
		vl := int(int32(binary.BigEndian.Uint32(a[2+nl:])))
		if vl < 0 || vl > n-v {
			return 0, 0, nil, false
		}
		if event {
			if nl == 2 && a[2] == 'i' && a[3] == 'd' {
				key = b[v : v+vl]
			}
		} else if nl == 3 && a[2] == 's' && a[3] == 'i' && a[4] == 'd' {
			key = b[v : v+vl]
		}
		p = v + vl
	}
	if int(dataLen) > n-p {
		return 0, 0, nil, false
	}
	return p + int(dataLen), p, key, true
}

// headKey reads the stream key from the head of an undecodable JSON
// message (invalid, or cut at a size limit): its request_id when the head
// holds it whole, else nil.
func headKey(data []byte, h *e2a.Head, buf []byte) ([]byte, []byte) {
	buf = e2a.ScanHead(data, buf[:0], h)
	return h.RequestID, buf
}

// hintFor is the partHint of key, a part of data, in partition p; the zero
// hint when key does not lie in data (or is too long for a hint).
func hintFor(key, data []byte, p int) partHint {
	if len(key) > math.MaxUint16 || len(data) > math.MaxInt32 {
		return partHint{}
	}
	d := offsetIn(key, data)
	if d < 0 {
		return partHint{}
	}
	return partHint{off: int32(d), n: uint16(len(key)), part: uint16(p)}
}

// offsetIn is where sub (not empty) starts in b, or -1 when it does not lie
// in b: an address difference (both point into the same live allocation
// when it does; otherwise the difference, wrapped or too large, is
// rejected).
func offsetIn(sub, b []byte) int {
	if len(sub) == 0 || len(sub) > len(b) {
		return -1
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if d > uintptr(len(b)-len(sub)) {
		return -1
	}
	return int(d)
}
