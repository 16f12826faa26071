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
		// headTo gives up at a backslash: not tried where one comes
		// before the key or in its value (most likely within 64 bytes).
		if haveRouteMarks && bytes.IndexByte(data[:min(len(data), stop+76)], '\\') < 0 {
			if key, ok := headTo(data, stop); ok {
				return key, false
			}
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

// headTo is what e2a.ScanHeadTo(data, _, _, stop) finds for RequestID,
// with stop from quickRoute, walking the same way by the marks of
// structMarksAVX2 (quotes, backslashes, brackets) instead of byte by byte:
// the walk to the key cost the reader of 2 shards more than quickRoute
// (190 of 260 ns a gen record). ok is false where it does not tell: a
// backslash before the key's value ends (ScanHeadTo's strings end by its
// own rules for escapes), a value that is not ASCII (ScanHeadTo decodes
// it), the key beyond the marked blocks; ScanHeadTo walks then.
// FuzzRoute compares the two on any input.
func headTo(data []byte, stop int) (key []byte, ok bool) {
	var m headMarks
	m.n = len(data)
	m.covered = min(len(data), ((stop+12)/64+2)*64, routeMarkBlocks*64)
	full := m.covered / 64
	if full > 0 {
		structMarksAVX2(&data[0], full, &m.words[0])
	}
	if m.covered%64 != 0 {
		var pad [64]byte
		copy(pad[:], data[full*64:m.covered])
		structMarksAVX2(&pad[0], 1, &m.words[full])
	}
	n := len(data)
	i := headWS(data, 0)
	if i >= n || data[i] != '{' {
		return nil, true
	}
	i = headWS(data, i+1)
	if i < n && data[i] == '}' {
		return nil, true
	}
	for i < n {
		if data[i] != '"' || i > stop {
			return nil, true
		}
		ks := i + 1
		ke := m.stringEnd(data, ks)
		if ke == markUnknown {
			return nil, false
		}
		if ke < 0 {
			return nil, true
		}
		// The key holds no escape (no backslash so far), so it is not
		// request_id unless it is the one at stop, and not a method
		// whose value could stop the walk (a bad escape).
		i = headWS(data, ke+1)
		if i >= n || data[i] != ':' {
			return nil, true
		}
		i = headWS(data, i+1)
		if i >= n {
			return nil, true
		}
		vs := i
		i = m.skip(data, i)
		if i == markUnknown {
			return nil, false
		}
		if i < 0 {
			return nil, true
		}
		if ks-1 == stop {
			if data[vs] != '"' {
				return nil, true
			}
			v := data[vs+1 : i-1]
			for _, c := range v {
				if c >= 0x80 {
					return nil, false
				}
			}
			return v, true
		}
		i = headWS(data, i)
		if i >= n || data[i] != ',' {
			return nil, true // '}': the object ends without the key
		}
		i = headWS(data, i+1)
	}
	return nil, true
}

// markUnknown: the marks do not reach that far.
const markUnknown = -2

// headMarks are structMarksAVX2's marks of data[:covered] (n: len(data)).
type headMarks struct {
	words      [routeMarkBlocks]uint64
	covered, n int
}

// next is the index of the first marked byte at or after i; -1 for none,
// markUnknown when there may be one past the marks.
func (m *headMarks) next(i int) int {
	end := -1
	if m.covered < m.n {
		end = markUnknown
	}
	if i >= m.covered {
		return end
	}
	w := i >> 6
	x := m.words[w] &^ (1<<(uint(i)&63) - 1)
	for x == 0 {
		if w++; w*64 >= m.covered {
			return end
		}
		x = m.words[w]
	}
	return w*64 + bits.TrailingZeros64(x)
}

// stringEnd is the closing quote of a string whose body starts at i, as
// ScanHead's headStringEnd finds it where there is no backslash; -1 when
// the input ends first; markUnknown past the marks or at a backslash.
func (m *headMarks) stringEnd(data []byte, i int) int {
	for j := m.next(i); ; j = m.next(j + 1) {
		if j < 0 {
			return j
		}
		switch data[j] {
		case '"':
			return j
		case '\\':
			return markUnknown
		}
	}
}

// skip is ScanHead's headSkip: the index past the value at data[i], -1
// when the input ends first; markUnknown as for stringEnd.
func (m *headMarks) skip(data []byte, i int) int {
	switch data[i] {
	case '"':
		e := m.stringEnd(data, i+1)
		if e < 0 {
			return e
		}
		return e + 1
	case '{', '[':
		depth := 0
		for {
			j := m.next(i)
			if j < 0 {
				return j
			}
			switch data[j] {
			case '"':
				e := m.stringEnd(data, j+1)
				if e < 0 {
					return e
				}
				i = e + 1
				continue
			case '\\':
				return markUnknown
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
			i = j + 1
		}
	}
	for ; i < len(data); i++ {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return -1
}

// headWS is ScanHead's skipWS.
func headWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
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
