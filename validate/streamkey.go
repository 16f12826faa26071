package validate

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"slices"
)

// A stream's table key is tap NUL conn NUL mode id (composite). The mode
// byte says the protocol and how the id is kept: most ids are drawn from a
// small alphabet (hex digits, base64url, ASCII), and the table keeps them
// in fewer bits than bytes, which is most of what a stream costs after its
// state (a million open streams with 36-byte ids: 36 MB of keys as sent).
//
//   - 'e', 'f' (E2A, EventMesh): the id as it is.
//   - 'E', 'F': an id ending in a canonical UUID (lowercase 8-4-4-4-12, as
//     Python's str(uuid4()) writes it): the bytes before it as they are,
//     then its 16 bytes.
//   - modeCoded | kind<<1 | (1 for EventMesh): the id encoded whole by kind
//     (below).
//
// Every encoding is a function of the id (the same id is always kept the
// same way: the first kind that fits, in a fixed order) and decodes back
// to it; two ids kept by different kinds differ in the mode byte, so a key
// never equals one of another id, whatever bytes the id holds.
const modeCoded = 0x80

const (
	kHex      = 1 + iota // lowercase hex digits, two a byte (an odd count: kHexOdd, the last in a high nibble)
	kHexOdd              //
	kUpHex               // uppercase hex digits, likewise
	kUpHexOdd            //
	kB64                 // base64url's alphabet ([A-Za-z0-9_-]): 4 in 3 bytes, the last 1–2 in 1–2 bytes
	kB64Tail3            // the same with a last group of 3 (3 bytes: a whole group's length)
	kSplit               // a base64url prefix and a lowercase hex tail: prefix length<<1 | odd tail, prefix in 6 bits, tail in 4
	kA7                  // bytes below 0x80: 8 in 7 bytes, the last 0–6 as they are
	kA7Tail7             // the same with a last 7 as they are (7 bytes: a whole group's length)
	kUUIDUp              // an id ending in an uppercase canonical UUID: the bytes before it, then its 16 bytes
	kCut                 // longer than maxKeyLen: a prefix, '~' and the hex hash of the whole (cutHashLen digits), as text
	kP95                 // printable ASCII (0x20–0x7e): 6 in 5 bytes (two base-95 triples of 20 bits), the last 0–4 as they are
	kP95Tail5            // the same with a last 5 as they are (5 bytes: a whole group's length)
)

// Character classes (cls), for the bytes past a whole word.
const (
	cHex   = 1 << iota // 0-9 a-f
	cUpHex             // 0-9 A-F
)

// minSplitTail is the shortest hex tail kept apart from a base64url prefix
// (it saves a quarter byte a digit and costs a header byte).
const minSplitTail = 8

// maxSplitPrefix is the longest such prefix (the header byte holds it).
const maxSplitPrefix = 63

var cls, b64Val, hexValUp = func() (c, v, u [256]byte) {
	for i := range 256 {
		v[i], u[i] = 0xff, 0xff
	}
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range len(b64) {
		v[b64[i]] = byte(i)
	}
	for i := range 16 {
		c["0123456789abcdef"[i]] |= cHex
		c["0123456789ABCDEF"[i]] |= cUpHex
		u["0123456789ABCDEF"[i]] = byte(i)
	}
	return
}()

// appendStreamKey appends the table key of a stream (see composite): tap
// NUL conn NUL mode id, the id encoded (above), a long one cut and hashed.
func appendStreamKey(k []byte, in *Input, proto byte, stream []byte) []byte {
	k = appendScopeName(k, in.Tap)
	k = append(k, 0)
	k = appendScopeName(k, in.Conn)
	k = append(k, 0)
	return appendStreamID(k, proto, stream)
}

// cutHashLen is how many hex digits of SHA-256 end a cut id (kCut).
const cutHashLen = 32

// appendStreamID appends the mode byte and the encoded id.
func appendStreamID(k []byte, proto byte, s []byte) []byte {
	coded := func(kind byte) byte { return modeCoded | kind<<1 | (proto^protoE2A)&1 }
	n := len(s)
	if n > maxKeyLen {
		// The hash is SHA-256's first 128 bits: the same in every run and on
		// every shard (a finding names the stream by this key: two runs of
		// validate over one capture print the same text), and no producer
		// can make two ids collide, as it could with a 64-bit hash under a
		// seed it can read in our source.
		h := sha256.Sum256(s)
		k = append(k, coded(kCut))
		k = append(k, s[:maxKeyLen-1-cutHashLen]...)
		k = append(k, '~')
		return hex.AppendEncode(k, h[:cutHashLen/2])
	}
	// The reference's request ids are uuid4s, its sids agent:uuid: a
	// canonical UUID at the end is kept as its 16 bytes.
	if n >= uuidLen && s[n-28] == '-' && s[n-23] == '-' && s[n-18] == '-' && s[n-13] == '-' {
		at := len(k)
		k = append(k, proto&^packedUUID)
		k = append(k, s[:n-uuidLen]...)
		var packed bool
		if k, packed = packUUID(k, s[n-uuidLen:]); packed {
			return k
		}
		if k, packed = packUUIDTable(k, s[n-uuidLen:], &hexValUp); packed {
			k[at] = coded(kUUIDUp)
			return k
		}
		k = k[:at]
	}
	if n < 2 {
		return append(append(k, proto), s...)
	}
	// The kinds are tried in a fixed order, each in one pass that also
	// checks the bytes fit: a lowercase hex id, a base64url prefix with a
	// long enough hex tail, base64url's alphabet (an uppercase hex id is
	// repacked), printable ASCII, ASCII, else as it is.
	at := len(k)
	if k2, ok := packLowerHex(append(k, coded(kHex+byte(n&1))), s); ok {
		return k2
	}
	m := hexSuffix(s)
	if n-m >= minSplitTail && m <= maxSplitPrefix {
		if k2, ok := packB64(append(k, coded(kSplit), byte(m<<1|(n-m)&1)), s[:m]); ok {
			return packHex(k2, s[m:])
		}
		// The prefix is not base64url's: nor is the whole id.
	} else {
		kind := byte(kB64)
		if n&3 == 3 {
			kind = kB64Tail3
		}
		if k2, ok := packB64(append(k, coded(kind)), s); ok {
			if isUpHex(s) {
				return packHex(append(k2[:at], coded(kUpHex+byte(n&1))), s)
			}
			return k2
		}
	}
	if n >= 6 {
		kind := byte(kP95)
		if n%6 == 5 {
			kind = kP95Tail5
		}
		if k2, ok := packP95(append(k[:at], coded(kind)), s); ok {
			return k2
		}
	}
	if n >= 8 {
		kind := byte(kA7)
		if n&7 == 7 {
			kind = kA7Tail7
		}
		if k2, ok := packA7(append(k[:at], coded(kind)), s); ok {
			return k2
		}
	}
	return append(append(k[:at], proto), s...)
}

// isUpHex says whether s is all uppercase hex digits (8 bytes at a time).
func isUpHex(s []byte) bool {
	const ones = 0x0101010101010101
	for ; len(s) >= 8; s = s[8:] {
		x := binary.LittleEndian.Uint64(s)
		y := x &^ (0x80 * ones)
		digit := (y + (0x80-'0')*ones) &^ (y + (0x7f-'9')*ones)
		letter := (y + (0x80-'A')*ones) &^ (y + (0x7f-'F')*ones)
		if (digit|letter)&^x&(0x80*ones) != 0x80*ones {
			return false
		}
	}
	for _, c := range s {
		if cls[c]&cUpHex == 0 {
			return false
		}
	}
	return true
}

// hexSuffix is where the run of lowercase hex digits that ends s starts:
// 8 bytes at a time from the end.
func hexSuffix(s []byte) int {
	m := len(s)
	for ; m >= 8; m -= 8 {
		if bad := notLowerHex(binary.LittleEndian.Uint64(s[m-8:])); bad != 0 {
			return m - 8 + (63-bits.LeadingZeros64(bad))/8 + 1
		}
	}
	for m > 0 && cls[s[m-1]]&cHex != 0 {
		m--
	}
	return m
}

// packUUIDTable is packUUID with another digit table.
func packUUIDTable(dst, b []byte, val *[256]byte) ([]byte, bool) {
	if len(b) != uuidLen || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return dst, false
	}
	n := len(dst)
	var bad byte
	for _, o := range uuidHex {
		hi, lo := val[b[o]], val[b[o+1]]
		bad |= hi | lo
		dst = append(dst, hi<<4|lo&15)
	}
	if bad > 15 {
		return dst[:n], false
	}
	return dst, true
}

// packHex appends the hex digits s (either case), two a byte, an odd last
// one in a high nibble: 8 at a time in a word.
func packHex(dst, s []byte) []byte {
	n, at := len(s), len(dst)
	dst = slices.Grow(dst, (n+1)/2+8)[:at+(n+1)/2+8]
	o, i := at, 0
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint32(dst[o:], packHexWord(binary.LittleEndian.Uint64(s[i:])))
		o += 4
	}
	for ; i+2 <= n; i += 2 {
		dst[o] = hexDigit(s[i])<<4 | hexDigit(s[i+1])
		o++
	}
	if i < n {
		dst[o] = hexDigit(s[i]) << 4
		o++
	}
	return dst[:o]
}

// packLowerHex is packHex for lowercase digits, checked as it goes: false
// (dst unchanged) at the first byte of s that is not one.
func packLowerHex(dst, s []byte) ([]byte, bool) {
	n, at := len(s), len(dst)
	dst = slices.Grow(dst, (n+1)/2+8)[:at+(n+1)/2+8]
	o, i := at, 0
	for ; i+8 <= n; i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if notLowerHex(x) != 0 {
			return dst[:at], false
		}
		binary.LittleEndian.PutUint32(dst[o:], packHexWord(x))
		o += 4
	}
	for ; i < n; i++ {
		if cls[s[i]]&cHex == 0 {
			return dst[:at], false
		}
	}
	return packHex(dst[:o], s[n&^7:]), true
}

// hexDigit is the value of a hex digit, either case.
func hexDigit(c byte) byte { return c&15 + c>>6*9 }

// packB64 appends s in 6 bits a character, a big-endian bit string:
// ceil(6·len/8) bytes; false (dst unchanged) when s is not all in
// base64url's alphabet.
func packB64(dst, s []byte) ([]byte, bool) {
	n, at := len(s), len(dst)
	dst = slices.Grow(dst, (6*n+7)/8+8)[:at+(6*n+7)/8+8]
	o, i := at, 0
	for ; i+8 <= n; i += 8 {
		a, b, c, d := b64Val[s[i]], b64Val[s[i+1]], b64Val[s[i+2]], b64Val[s[i+3]]
		e, f, g, h := b64Val[s[i+4]], b64Val[s[i+5]], b64Val[s[i+6]], b64Val[s[i+7]]
		if a|b|c|d|e|f|g|h > 63 {
			return dst[:at], false
		}
		v := uint64(a)<<58 | uint64(b)<<52 | uint64(c)<<46 | uint64(d)<<40 | uint64(e)<<34 | uint64(f)<<28 | uint64(g)<<22 | uint64(h)<<16
		binary.BigEndian.PutUint64(dst[o:], v)
		o += 6
	}
	if i < n {
		var v uint64
		bits := 0
		for ; i < n; i++ {
			x := b64Val[s[i]]
			if x > 63 {
				return dst[:at], false
			}
			v = v<<6 | uint64(x)
			bits += 6
		}
		binary.BigEndian.PutUint64(dst[o:], v<<(64-bits))
		o += (bits + 7) / 8
	}
	return dst[:o], true
}

// packA7 appends s 8 bytes in 7, the last len%8 as they are; false (dst
// unchanged) when a byte of s is 0x80 or above.
func packA7(dst, s []byte) ([]byte, bool) {
	n, at := len(s), len(dst)
	dst = slices.Grow(dst, n+1)[:at+n+1]
	o, i := at, 0
	var hi uint64
	for ; i+8 <= n; i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		hi |= x
		x = x&0x007f007f007f007f | x&0x7f007f007f007f00>>1
		x = x&0x00003fff00003fff | x&0x3fff00003fff0000>>2
		x = x&0x000000000fffffff | x&0x0fffffff00000000>>4
		binary.LittleEndian.PutUint64(dst[o:], x)
		o += 7
	}
	for ; i < n; i++ {
		hi |= uint64(s[i])
		dst[o] = s[i]
		o++
	}
	if hi&0x8080808080808080 != 0 {
		return dst[:at], false
	}
	return dst[:o], true
}

// packP95 appends s 6 bytes in 5 (each byte less 0x20 a base-95 digit,
// three to 20 bits, two to 40 bits big-endian), the last len%6 as they
// are; false (dst unchanged) when a byte of s is not printable ASCII.
func packP95(dst, s []byte) ([]byte, bool) {
	n, at := len(s), len(dst)
	dst = slices.Grow(dst, n+8)[:at+n+8]
	o, i := at, 0
	var bad uint64 // wraps below 0 where a digit is past 94
	for ; i+6 <= n; i += 6 {
		a, b, c := uint64(s[i]-0x20), uint64(s[i+1]-0x20), uint64(s[i+2]-0x20)
		d, e, f := uint64(s[i+3]-0x20), uint64(s[i+4]-0x20), uint64(s[i+5]-0x20)
		bad |= (94 - a) | (94 - b) | (94 - c) | (94 - d) | (94 - e) | (94 - f)
		binary.BigEndian.PutUint64(dst[o:], (a*9025+b*95+c)<<44|(d*9025+e*95+f)<<24)
		o += 5
	}
	for ; i < n; i++ {
		bad |= 94 - uint64(s[i]-0x20)
		dst[o] = s[i]
		o++
	}
	if bad>>63 != 0 {
		return dst[:at], false
	}
	return dst[:o], true
}

// streamText is the id of a key's mode byte and encoded id (the inverse of
// appendStreamID): b itself when it is kept as it is, else a copy.
func streamText(mode byte, b []byte) []byte {
	switch {
	case mode&modeCoded == 0 && mode&packedUUID == 0:
		n := len(b) - 16
		return appendUUIDText(append(make([]byte, 0, n+uuidLen), b[:n]...), b[n:])
	case mode&modeCoded == 0:
		return b
	}
	switch kind := mode &^ modeCoded >> 1; kind {
	case kHex, kHexOdd:
		return unpackHex(nil, b, kind == kHexOdd, "0123456789abcdef")
	case kUpHex, kUpHexOdd:
		return unpackHex(nil, b, kind == kUpHexOdd, "0123456789ABCDEF")
	case kB64, kB64Tail3:
		n := len(b) / 3 * 4
		switch r := len(b) % 3; {
		case kind == kB64Tail3:
			n--
		case r > 0:
			n += r
		}
		return unpackB64(make([]byte, 0, n), b, n)
	case kSplit:
		m := int(b[0] >> 1)
		pb := (6*m + 7) / 8
		out := unpackB64(make([]byte, 0, m+2*(len(b)-1-pb)), b[1:1+pb], m)
		return unpackHex(out, b[1+pb:], b[0]&1 != 0, "0123456789abcdef")
	case kA7, kA7Tail7:
		groups, rest := len(b)/7, len(b)%7
		if kind == kA7Tail7 {
			groups, rest = groups-1, rest+7
		}
		out := make([]byte, 0, 8*groups+rest)
		for g := range groups {
			var w [8]byte
			copy(w[:], b[7*g:7*g+7])
			x := binary.LittleEndian.Uint64(w[:])
			x = x&0x000000000fffffff | x<<4&0x0fffffff00000000
			x = x&0x00003fff00003fff | x<<2&0x3fff00003fff0000
			x = x&0x007f007f007f007f | x<<1&0x7f007f007f007f00
			out = binary.LittleEndian.AppendUint64(out, x)
		}
		return append(out, b[7*groups:]...)
	case kP95, kP95Tail5:
		groups, rest := len(b)/5, len(b)%5
		if kind == kP95Tail5 {
			groups, rest = groups-1, rest+5
		}
		out := make([]byte, 0, 6*groups+rest)
		for g := range groups {
			c := b[5*g : 5*g+5]
			v := uint64(c[0])<<32 | uint64(c[1])<<24 | uint64(c[2])<<16 | uint64(c[3])<<8 | uint64(c[4])
			for _, t := range [2]uint64{v >> 20, v & (1<<20 - 1)} {
				out = append(out, byte(t/9025)+0x20, byte(t/95%95)+0x20, byte(t%95)+0x20)
			}
		}
		return append(out, b[5*groups:]...)
	case kUUIDUp:
		n := len(b) - 16
		out := append(make([]byte, 0, n+uuidLen), b[:n]...)
		at := len(out)
		out = appendUUIDText(out, b[n:])
		for j := at; j < len(out); j++ {
			if c := out[j]; c >= 'a' && c <= 'f' {
				out[j] = c - 'a' + 'A'
			}
		}
		return out
	}
	return b // kCut: the cut text
}

func unpackHex(dst, b []byte, odd bool, digits string) []byte {
	for _, x := range b {
		dst = append(dst, digits[x>>4], digits[x&15])
	}
	if odd && len(b) > 0 {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// unpackB64 appends the n characters packB64 wrote into b.
func unpackB64(dst, b []byte, n int) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for ; n >= 4 && len(b) >= 3; n, b = n-4, b[3:] {
		v := uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
		dst = append(dst, alphabet[v>>18], alphabet[v>>12&63], alphabet[v>>6&63], alphabet[v&63])
	}
	var acc uint32
	bits := 0
	for _, x := range b {
		acc = acc<<8 | uint32(x)
		bits += 8
		for bits >= 6 && n > 0 {
			bits -= 6
			dst = append(dst, alphabet[acc>>bits&63])
			n--
		}
	}
	return dst
}
