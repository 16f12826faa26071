package validate

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
// returns dst unchanged and false): one pass, a table per digit.
func packUUID(dst, b []byte) ([]byte, bool) {
	if len(b) != uuidLen || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return dst, false
	}
	n := len(dst)
	var bad byte
	for _, o := range uuidHex {
		hi, lo := hexVal[b[o]], hexVal[b[o+1]]
		bad |= hi | lo
		dst = append(dst, hi<<4|lo&15)
	}
	if bad > 15 {
		return dst[:n], false
	}
	return dst, true
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
