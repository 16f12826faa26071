package validate

import "encoding/binary"

// Stream keys that end in a canonical UUID (8-4-4-4-12 lowercase hex, as
// Python's str(uuid4()) and Java's UUID.toString write it) keep it as its
// 16 bytes in the table's key; composite marks such a key by clearing
// packedUUID in its protocol byte ('e' → 'E', 'f' → 'F'), so that a packed
// key never equals a plain one. Uppercase or otherwise shaped ids are kept
// as they are.

const (
	uuidLen    = 36
	packedUUID = 0x20 // the bit of the protocol byte, set in a plain key
)

// uuidHex are the offsets of the 16 hex pairs in a canonical UUID.
var uuidHex = [16]uint8{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// hexVal is the value of a lowercase hex digit, 0xff for any other byte.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
	}
	return t
}()

func isUUID(b []byte) bool {
	_, ok := packUUID(nil, b)
	return ok
}

// packUUID appends the 16 bytes of b if b is a canonical UUID (else it
// returns dst unchanged and false): its 32 digits in four words, each
// checked and packed 8 digits at a time.
func packUUID(dst, b []byte) ([]byte, bool) {
	if len(b) != uuidLen || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return dst, false
	}
	le := binary.LittleEndian
	w0 := le.Uint64(b)
	w1 := uint64(le.Uint32(b[9:])) | uint64(le.Uint32(b[14:]))<<32
	w2 := uint64(le.Uint32(b[19:])) | uint64(le.Uint32(b[24:]))<<32
	w3 := le.Uint64(b[28:])
	if notLowerHex(w0)|notLowerHex(w1)|notLowerHex(w2)|notLowerHex(w3) != 0 {
		return dst, false
	}
	dst = le.AppendUint32(dst, packHexWord(w0))
	dst = le.AppendUint32(dst, packHexWord(w1))
	dst = le.AppendUint32(dst, packHexWord(w2))
	return le.AppendUint32(dst, packHexWord(w3)), true
}

// notLowerHex has the high bit set in each byte of x (8 bytes, little
// endian) that is not a lowercase hex digit.
func notLowerHex(x uint64) uint64 {
	const ones = 0x0101010101010101
	y := x &^ (0x80 * ones)
	digit := (y + (0x80-'0')*ones) &^ (y + (0x7f-'9')*ones)
	letter := (y + (0x80-'a')*ones) &^ (y + (0x7f-'f')*ones)
	return (digit|letter)&^x&(0x80*ones) ^ 0x80*ones
}

// packHexWord packs the 8 hex digits of x (either case, checked), first
// in the first byte's high nibble, into 4 bytes (little endian).
func packHexWord(x uint64) uint32 {
	v := x&0x0f0f0f0f0f0f0f0f + x>>6&0x0101010101010101*9 // each byte's digit value
	t := (v<<4 | v>>8) & 0x00ff00ff00ff00ff               // pairs, in the low byte of each 16 bits
	t = (t | t>>8) & 0x0000ffff0000ffff
	return uint32(t | t>>16)
}

// appendUUIDText appends the canonical text of the 16 bytes b.
func appendUUIDText(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	for i, x := range b[:16] {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, digits[x>>4], digits[x&15])
	}
	return dst
}
